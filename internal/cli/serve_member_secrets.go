package cli

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/internal/secretstore"
)

// MemberSecretsPath is where a team gateway's members set their own values
// of the secrets of its per-member servers (`switchboard gateway secret`):
// PUT or DELETE MemberSecretsPath + NAME, behind the gateway's auth.
const MemberSecretsPath = "/member/secrets/"

// memberSecrets serves MemberSecretsPath: the caller — a principal with a
// key or an access token, never the shared token, whose holder uses
// `secret set` on the gateway's machine — sets or removes its own value of
// a secret that a per-member server names, in the store's namespace
// principal/<name>. Its own connections reopen at its next call, with the
// new value. Nothing else is reachable here: no other namespace, no name
// no per-member server uses, no reading a value back.
func (o *ServeOptions) memberSecretsHandler(s *session, members *gateway.Members, log *slog.Logger) http.Handler {
	store := o.SecretStore()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := gateway.PrincipalFromTokenInfo(auth.TokenInfoFromContext(r.Context()))
		if !p.Keyed() {
			http.Error(w, "forbidden: only a member with a key or an access token has values of their own here; the gateway's own are set with `switchboard secret set` on its machine", http.StatusForbidden)
			return
		}
		name := strings.TrimPrefix(r.URL.Path, MemberSecretsPath)
		if why := config.SecretNameProblem(name); why != "" {
			http.Error(w, "bad request: secret name "+quoteName(name)+" "+why, http.StatusBadRequest)
			return
		}
		if !slices.Contains(perMemberSecrets(s.sb.Config(), o.auth), name) {
			http.Error(w, "not found: no per-member server of this gateway uses secret "+name, http.StatusNotFound)
			return
		}
		ns := store.In(memberNamespace(p.Name))
		switch r.Method {
		case http.MethodPut:
			b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, secretstore.MaxValue+1))
			if err != nil {
				http.Error(w, "bad request: the value is longer than the store takes", http.StatusRequestEntityTooLarge)
				return
			}
			if why := secretstore.ValueProblem(string(b)); why != "" {
				http.Error(w, "bad request: "+why+"; nothing was stored", http.StatusBadRequest)
				return
			}
			if _, err := ns.Set(r.Context(), name, string(b)); err != nil {
				log.Warn("a member's secret was not stored", "principal", p.Name, "secret", name, "error", err)
				http.Error(w, "the gateway could not store it: "+err.Error(), http.StatusServiceUnavailable)
				return
			}
		case http.MethodDelete:
			had, err := ns.Delete(r.Context(), name)
			if !memberRemoved(w, had, err, "value of "+name) {
				return
			}
		default:
			w.Header().Set("Allow", "PUT, DELETE")
			http.Error(w, "method not allowed: PUT a value or DELETE it; values are never read back", http.StatusMethodNotAllowed)
			return
		}
		members.Forget(p.Name)
		log.Info("a member changed their own secret", "principal", p.Name, "secret", name, "method", r.Method)
		w.WriteHeader(http.StatusNoContent)
	})
}

// perMemberSecrets are the secrets the per-member servers of cfg name.
func perMemberSecrets(cfg *config.Resolved, a *gateway.Auth) []string {
	var out []string
	for _, rs := range cfg.Servers {
		if _, per := a.PerMember(rs.Name); per {
			out = append(out, rs.Secrets...)
		}
	}
	return out
}

// memberSecretError is the error of a refused request, with the
// gateway's reason.
func memberSecretError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	msg := strings.TrimSpace(string(b))
	if msg == "" {
		msg = resp.Status
	}
	if resp.StatusCode == http.StatusUnauthorized {
		return errors.New("the gateway refused the key (401): check $" + MemberKeyEnv + " or --key-file")
	}
	return fmt.Errorf("the gateway answered %d: %s", resp.StatusCode, msg)
}
