package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/secretstore"
	"github.com/switchboard-mcp/switchboard/oauth"
)

// memberNamespace is the namespace of the secret store that holds
// principal's own values (`secret set --principal`).
func memberNamespace(principal string) string { return "principal/" + principal }

// members runs the calls of the auth file's per-member servers as their
// callers (docs/gateway.md, Each member's own credentials): a principal
// with values of its own for every secret a server names gets a session
// of its own — this gateway's configuration cut to the per-member
// servers, its permission check, its host options — whose secrets come
// from the store's namespace principal/<name> and whose OAuth tokens are
// the member's own logins (`gateway login`), never the gateway's.
func (o *ServeOptions) members(s *session) *gateway.Members {
	if o.SecretStore == nil {
		return nil
	}
	store := o.SecretStore()
	return &gateway.Members{
		Idle: o.MemberIdle,
		Missing: func(_ context.Context, principal, server string) ([]string, error) {
			if rs, _ := memberOAuthServer(s.sb.Config(), o.auth, server); rs != nil {
				dir, keys := memberTokens(o.Home, store, principal)
				if ok, err := oauth.HasLogin(dir, keys, server); err != nil || ok {
					return nil, err
				}
				return []string{"an OAuth login"}, nil
			}
			return memberMissing(s.sb.Config(), store.In(memberNamespace(principal)), server)
		},
		OAuth: func(server string) bool {
			rs, _ := memberOAuthServer(s.sb.Config(), o.auth, server)
			return rs != nil
		},
		Open: func(ctx context.Context, principal string) (*host.Host, func(), error) {
			cfg, err := o.Config()
			if err != nil {
				return nil, nil, err
			}
			mo := o.runtimeOptions
			ns := store.In(memberNamespace(principal))
			mo.SecretStore = func() *secretstore.Store { return ns }
			dir, keys := memberTokens(o.Home, store, principal)
			prev := mo.HostOptions
			mo.HostOptions = func(ho *host.Options) {
				if prev != nil {
					prev(ho)
				}
				// The member's own logins, used and refreshed (the new
				// token written back), never asked for: none is a
				// refusal that names `gateway login`.
				ho.Authorizer = oauth.New(&oauth.Options{Dir: dir, Secrets: keys, Logger: ho.Logger})
				hint := ho.ErrorHint
				ho.ErrorHint = func(server string, err error) string {
					if lr := (*oauth.LoginRequiredError)(nil); errors.As(err, &lr) {
						return memberLoginHint(server)
					}
					if hint != nil {
						return hint(server, err)
					}
					return ""
				}
			}
			ms, err := startSessionWith(ctx, &mo, cfg, func(rs config.ResolvedServer) bool {
				_, per := o.auth.PerMember(rs.Name)
				return per
			})
			if err != nil {
				return nil, nil, err
			}
			return ms.h, func() { ms.h.Close(); ms.logClose() }, nil
		},
		Hint: func(principal, server string, missing []string) string {
			if rs, _ := memberOAuthServer(s.sb.Config(), o.auth, server); rs != nil {
				return memberLoginHint(server)
			}
			name := "NAME"
			if len(missing) == 1 {
				name = missing[0]
			}
			return fmt.Sprintf("send yours with `switchboard gateway secret set %s --url <this gateway's URL>` (your key in $%s), or the gateway's admin sets it with `switchboard secret set --principal %s %s`", name, MemberKeyEnv, principal, name)
		},
	}
}

// memberLoginHint says how a member logs in to server through the gateway.
func memberLoginHint(server string) string {
	return fmt.Sprintf("log in with `switchboard gateway login %s --url <this gateway's URL>` (your key in $%s)", server, MemberKeyEnv)
}

// memberMissing returns the secrets of server that the namespace ns holds
// no value for. A server whose definition names no secret cannot be
// called with a member's own credentials: it is an error, never the
// gateway's.
func memberMissing(cfg *config.Resolved, ns *secretstore.Store, server string) ([]string, error) {
	var names []string
	found := false
	for _, rs := range cfg.Servers {
		if rs.Name == server {
			names, found = rs.Secrets, true
			break
		}
	}
	if !found {
		return nil, fmt.Errorf("no server %s is configured", server)
	}
	if len(names) == 0 {
		return nil, errors.New("its definition names no ${secret:NAME} and it takes no OAuth login (a stdio server, or one with its own Authorization header), so it has nothing of a member's own to use")
	}
	held, err := ns.List()
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, e := range held {
		have[e.Name] = true
	}
	var missing []string
	for _, n := range names {
		if !have[n] {
			missing = append(missing, n)
		}
	}
	return missing, nil
}
