package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/console"
	"github.com/switchboard-mcp/switchboard/policy"
)

// ConsolePath is where `serve --http` serves the console.
const ConsolePath = "/ui"

// ConsoleAdminGroup is the group whose members are the console's admins
// under a gateway, besides the holder of the gateway's shared token (the
// person who runs it): they approve servers, write rules, accept tool
// changes and use the playground. Every other principal is a member: it
// sees the servers and tools its rules do not deny it, and its own calls.
const ConsoleAdminGroup = "admin"

// gatewayConsole is the console `serve --http` mounts at ConsolePath,
// behind the gateway's own credentials (docs/console.md, In the gateway):
// a key, the shared token or an access token is posted once to its login
// page and checked again on every request. Without any credential (a
// loopback gateway with neither token nor auth file) it signs nobody in:
// `switchboard ui` is the console of one machine. Its Calls page lists the
// gateway's recent calls from calls (its audit log; nil when none is
// kept) and draws opts.metrics. A permission question that the calling
// client cannot answer waits in the console (asker.Console), up to
// ConsoleAskWait. closeFn closes its own audit log.
func (opts *ServeOptions) gatewayConsole(s *session, calls *gateway.AuditLog, asker *gateway.Asker, log *slog.Logger) (_ http.Handler, closeFn func(), _ error) {
	logs := filepath.Join(opts.Home, "logs")
	if err := os.MkdirAll(logs, 0o700); err != nil {
		return nil, nil, fmt.Errorf("the console's audit log: %w", err)
	}
	audit, err := os.OpenFile(filepath.Join(logs, "console-audit.jsonl"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("the console's audit log: %w", err)
	}
	a := opts.auth
	var recent func() []gateway.AuditEntry
	if calls != nil {
		recent = calls.Recent
	}
	var figures func() []gateway.ServerFigures
	if opts.metrics != nil {
		figures = opts.metrics.Figures
	}
	asks := console.NewAsks()
	asks.Who = func(ctx context.Context) string {
		if p := gateway.CallPrincipal(ctx); p != nil {
			return p.Name
		}
		return ""
	}
	asks.ID = gateway.QuestionID
	var c *console.Console
	if asker != nil {
		asks.Always = asker.AlwaysFor
		asker.Console = consoleAsker{asks: asks, auth: a, watching: func(principal string) bool {
			return c != nil && c.Watching(principal, ConsoleAskWait)
		}}
		asker.Link = func(id string) string { return opts.consoleURL() + "/asks?q=" + id }
	}
	c, err = console.New(s.sb, console.Options{
		Asks:         asks,
		GatewayCalls: recent,
		Figures:      figures,
		BasePath:     ConsolePath,
		Audit:        audit,
		Home:         opts.Home,
		Now:          opts.Now,
		SignInClosed: func() string {
			if opts.asksNoCredential() {
				return "This gateway asks for no credential (loopback, no --token-file, no keys), so its console signs nobody in. " +
					"On this machine, run \"switchboard ui\" for the console; to sign in here, start the gateway with --token-file, " +
					"or add a key with \"switchboard gateway key add NAME\"."
			}
			return ""
		},
		// The same budget of refused credentials per address as /mcp's.
		Failures: a,
		Login: func(ctx context.Context, key string) (*console.Viewer, error) {
			if opts.asksNoCredential() {
				return nil, errors.New("this gateway has no credentials (start it with --token-file or keys of `switchboard gateway key add`)")
			}
			p, err := a.Authenticate(ctx, key)
			if err != nil {
				return nil, err
			}
			return opts.consoleViewer(s, a, p), nil
		},
	})
	if err != nil {
		audit.Close()
		return nil, nil, err
	}
	log.Info("console served", "path", ConsolePath+"/")
	return c, func() { audit.Close() }, nil
}

// consoleViewer is principal p in the console: an admin (the shared
// token's holder, or in ConsoleAdminGroup), or a member seeing the tools
// the rules in force, with its own and its groups' from the auth file, do
// not deny it.
func (opts *ServeOptions) consoleViewer(s *session, a *gateway.Auth, p *gateway.Principal) *console.Viewer {
	pol := s.sb.Policy().With(opts.SessionRules...).With(a.Scoped().For(p.Name, p.Groups)...)
	return &console.Viewer{
		Name:  p.Name,
		Admin: !p.Keyed() || slices.Contains(p.Groups, ConsoleAdminGroup),
		Sees:  func(req policy.Request) bool { return pol.Decide(req).Action != policy.Deny },
	}
}

// ConsoleAskWait bounds how long a call of a client that cannot be asked
// waits for its question to be answered in the gateway's console.
const ConsoleAskWait = 2 * time.Minute

// consoleAsker puts a question nobody else can answer in the console, when
// somebody can sign in to it (the gateway has credentials) and somebody who
// could answer it (an admin, or the caller) has used the console within
// ConsoleAskWait; otherwise the call is refused at once, as without a
// console, rather than held for an answer nobody is there to give.
type consoleAsker struct {
	asks     *console.Asks
	auth     *gateway.Auth
	watching func(principal string) bool
}

func (c consoleAsker) AskPermission(ctx context.Context, req host.PermitRequest, d policy.Decision) (host.Answer, error) {
	if c.auth == nil || !c.auth.Required() {
		return host.AnswerDeny, gateway.ErrCannotAsk
	}
	who := ""
	if p := gateway.CallPrincipal(ctx); p != nil {
		who = p.Name
	}
	// A question sent as a link is answered by whoever follows it.
	if gateway.QuestionID(ctx) == "" && c.watching != nil && !c.watching(who) {
		return host.AnswerDeny, gateway.ErrCannotAsk
	}
	ctx, cancel := context.WithTimeout(ctx, ConsoleAskWait)
	defer cancel()
	return c.asks.AskPermission(ctx, req, d)
}

// consoleURL is the console's address as clients reach the gateway: under
// --resource-url's origin, else the address listened on (a wildcard bind
// as 127.0.0.1).
func (opts *ServeOptions) consoleURL() string {
	if u, err := url.Parse(opts.ResourceURL); err == nil && u.Host != "" {
		return u.Scheme + "://" + u.Host + ConsolePath
	}
	addr, _ := opts.consoleAddr.Load().(string)
	if h, port, err := net.SplitHostPort(addr); err == nil {
		if ip := net.ParseIP(h); ip != nil && ip.IsUnspecified() {
			addr = net.JoinHostPort("127.0.0.1", port)
		}
	}
	return "http://" + addr + ConsolePath
}
