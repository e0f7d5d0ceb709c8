package cli

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/internal/secretstore"
	"github.com/switchboard-mcp/switchboard/oauth"
)

// MemberOAuthPath is where a team gateway's members hand in their own
// OAuth login to a per-member server (`switchboard gateway login`):
// GET MemberOAuthPath + SERVER says where to log in, PUT stores the
// login, DELETE forgets it — behind the gateway's auth.
const MemberOAuthPath = "/member/oauth/"

// memberPath is the prefix of every endpoint of a member's own
// credentials (MemberSecretsPath, MemberOAuthPath).
const memberPath = "/member/"

// maxLogin bounds a login handed in: tokens, a client registration and
// a token endpoint are far less.
const maxLogin = secretstore.MaxValue

// memberLoginInfo is the answer of a GET of MemberOAuthPath + SERVER:
// where the member's own login goes.
type memberLoginInfo struct {
	Server string      `json:"server"`
	URL    string      `json:"url"`
	Type   config.Type `json:"type"`
}

// memberTokens is where principal's OAuth logins live on the gateway: a
// token directory of its own (which keys the store's entries, and holds
// them where the store does not answer) and the store's namespace
// oauth/principal/<name>.
func memberTokens(home string, store *secretstore.Store, principal string) (dir string, keys oauth.SecretStore) {
	dir = filepath.Join(oauthDir(home), "members", memberDirName(principal))
	return dir, store.In("oauth/" + memberNamespace(principal)).Tokens()
}

// memberDirName is principal's folder name among the members' token
// folders: path-escaped, and "." and ".." spelled with escaped dots. An
// access token's claim may name a principal ".." (nothing else refuses
// it), whose folder would otherwise be the gateway's own token folder —
// its login handed in would replace the gateway's, its logout delete it.
func memberDirName(principal string) string {
	name := url.PathEscape(principal)
	if name == "." || name == ".." {
		name = strings.ReplaceAll(name, ".", "%2E")
	}
	return name
}

// memberOAuthServer returns the definition of server when the gateway's
// members call it with their own OAuth login: a per-member http or sse
// server whose definition names no ${secret:NAME} (those take the
// members' values instead) and sets no Authorization header of its own.
// Else why not.
func memberOAuthServer(cfg *config.Resolved, a *gateway.Auth, server string) (*config.ResolvedServer, string) {
	rs := cfg.Server(server)
	if rs == nil {
		return nil, "no server " + server + " is configured"
	}
	if _, per := a.PerMember(server); !per {
		return nil, "server " + server + " is not called with each member's own credentials"
	}
	if t := rs.Effective.Type; t != config.TypeHTTP && t != config.TypeSSE {
		return nil, "server " + server + " is a " + string(t) + " server; OAuth applies to http and sse servers"
	}
	if u, err := url.Parse(rs.Written.URL); err == nil && (strings.Contains(u.RawQuery, "${") || strings.Contains(u.Fragment, "${") || u.User != nil) {
		// The URL is handed to every member who asks where to log in: a
		// ${VAR} there would show them the gateway's own value.
		return nil, "server " + server + "'s url carries user info or a ${VAR} in its query, which the gateway does not hand to its members; a server each member logs in to names no credential in its url"
	}
	if len(rs.Secrets) > 0 {
		return nil, "server " + server + " takes each member's values of " + strings.Join(rs.Secrets, ", ") + " (`switchboard gateway secret set`), not a login"
	}
	for k := range rs.Effective.Headers {
		if http.CanonicalHeaderKey(k) == "Authorization" {
			return nil, "server " + server + " sets its own Authorization header, so no login is used"
		}
	}
	return rs, ""
}

// memberOAuthHandler serves MemberOAuthPath: the caller — a principal
// with a key or an access token, never the shared token — learns where
// to log in to a per-member server, hands in the login it made on its own
// machine (oauth.ExportLogin's), or forgets it. The login is stored in
// the caller's own namespace and used by the caller's connections only,
// from their next call on; no token is ever read back.
func (o *ServeOptions) memberOAuthHandler(s *session, members *gateway.Members, log *slog.Logger) http.Handler {
	store := o.SecretStore()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := gateway.PrincipalFromTokenInfo(auth.TokenInfoFromContext(r.Context()))
		if !p.Keyed() {
			http.Error(w, "forbidden: only a member with a key or an access token logs in here; the gateway's own login is `switchboard mcp login` on its machine", http.StatusForbidden)
			return
		}
		server := strings.TrimPrefix(r.URL.Path, MemberOAuthPath)
		rs, why := memberOAuthServer(s.sb.Config(), o.auth, server)
		if rs == nil {
			http.Error(w, "not found: "+why, http.StatusNotFound)
			return
		}
		dir, keys := memberTokens(o.Home, store, p.Name)
		switch r.Method {
		case http.MethodGet:
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(memberLoginInfo{Server: server, URL: rs.Effective.URL, Type: rs.Effective.Type})
			return
		case http.MethodPut:
			b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxLogin))
			if err != nil {
				http.Error(w, "bad request: the login is longer than the gateway takes", http.StatusRequestEntityTooLarge)
				return
			}
			if err := oauth.ImportLogin(dir, keys, server, rs.Effective.URL, b); err != nil {
				var bad *oauth.BadLoginError
				if errors.As(err, &bad) {
					http.Error(w, "bad request: the login was not stored: "+bad.Why, http.StatusBadRequest)
					return
				}
				log.Warn("a member's OAuth login was not stored", "principal", p.Name, "server", server, "error", err)
				http.Error(w, "the gateway could not store the login: "+err.Error(), http.StatusServiceUnavailable)
				return
			}
		case http.MethodDelete:
			had, err := oauth.LogoutStore(dir, keys, server)
			if !memberRemoved(w, had, err, "login to "+server) {
				return
			}
		default:
			w.Header().Set("Allow", "GET, PUT, DELETE")
			http.Error(w, "method not allowed: GET where to log in, PUT a login or DELETE it; tokens are never read back", http.StatusMethodNotAllowed)
			return
		}
		members.Forget(p.Name)
		log.Info("a member changed their own OAuth login", "principal", p.Name, "server", server, "method", r.Method)
		w.WriteHeader(http.StatusNoContent)
	})
}

// memberRemoved answers a DELETE of a member's own what that failed
// (err), or found none to remove; it reports whether one was removed.
func memberRemoved(w http.ResponseWriter, had bool, err error, what string) bool {
	if err != nil {
		http.Error(w, "the gateway could not remove it: "+err.Error(), http.StatusServiceUnavailable)
		return false
	}
	if !had {
		http.Error(w, "not found: you have no "+what, http.StatusNotFound)
		return false
	}
	return true
}

// memberHandler serves every endpoint of members' own credentials.
func (o *ServeOptions) memberHandler(s *session, members *gateway.Members, log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(MemberSecretsPath, o.memberSecretsHandler(s, members, log))
	mux.Handle(MemberOAuthPath, o.memberOAuthHandler(s, members, log))
	return mux
}
