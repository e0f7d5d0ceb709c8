package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
	"github.com/switchboard-mcp/switchboard/oauth"
)

func init() {
	registerMCPCommand(func(f *Factory) *cobra.Command { return NewMCPLoginCmd(f, nil) })
	registerMCPCommand(func(f *Factory) *cobra.Command { return NewMCPLogoutCmd(f, nil) })
}

// oauthDir is where OAuth tokens live: one 0600 file per server, and one
// for the DPoP key of a server whose tokens are bound to one.
func oauthDir(home string) string { return filepath.Join(home, "oauth") }

// MCPLoginOptions are the inputs of `mcp login`.
type MCPLoginOptions struct {
	IO      *IOStreams
	Factory *Factory
	Name    string
	// ClientID and ClientSecret name a pre-registered client (--client-id,
	// --client-secret); without them the host registers itself.
	ClientID, ClientSecret string
	// NoBrowser follows the authorization redirect without a browser, for
	// authorization servers that approve on their own (--no-browser).
	NoBrowser bool
	// Timeout bounds the whole login (--timeout).
	Timeout time.Duration
	// OpenBrowser opens a URL; if nil, the platform's opener is used.
	OpenBrowser func(url string) error
}

// NewMCPLoginCmd returns `mcp login`; runF, if not nil, replaces mcpLoginRun.
func NewMCPLoginCmd(f *Factory, runF func(context.Context, *MCPLoginOptions) error) *cobra.Command {
	opts := &MCPLoginOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "login NAME",
		Short: "Authorize Switchboard with a remote server (OAuth)",
		Long: `Run the OAuth 2.1 authorization of a Streamable HTTP or SSE server: discover its
authorization server, register (or use --client-id), open the browser to approve,
and receive the answer on a loopback port. Tokens are kept in your OS credential
store (Secret Service, Keychain, Credential Manager) when one answers, else in a
0600 file in ~/.switchboard/oauth, and refreshed before they expire; a server
that binds its tokens to a key (DPoP) gets a new key at each login, kept in a
0600 file there either way (docs/oauth.md).`,
		Args:              exactArgs(1, "a server name"),
		ValidArgsFunction: completeServerNames(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return mcpLoginRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.ClientID, "client-id", "", "a client ID registered with the authorization server")
	cmd.Flags().StringVar(&opts.ClientSecret, "client-secret", "", "the secret of --client-id, if it has one")
	cmd.Flags().BoolVar(&opts.NoBrowser, "no-browser", false, "follow the authorization redirect without a browser (servers that approve on their own)")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", 5*time.Minute, "how long to wait for the approval")
	return cmd
}

func mcpLoginRun(ctx context.Context, opts *MCPLoginOptions) error {
	f := opts.Factory
	cfg, err := f.LoadConfig()
	if err != nil {
		return err
	}
	rs := cfg.Server(opts.Name)
	if rs == nil {
		return notDefinedErr(f, opts.Name)
	}
	if t := rs.Effective.Type; t != config.TypeHTTP && t != config.TypeSSE {
		return Usagef("OAuth applies to http and sse servers", "server %q is a %s server", opts.Name, t)
	}
	if opts.ClientSecret != "" && opts.ClientID == "" {
		return Usagef("pass --client-id with --client-secret", "--client-secret needs --client-id")
	}
	dir := oauthDir(f.Home())
	// A failed login keeps the tokens of the last one.
	o := &oauth.Options{Dir: dir, ClientID: opts.ClientID, ClientSecret: opts.ClientSecret, NoBrowser: opts.NoBrowser, Fresh: true,
		Secrets: f.secretStore().OAuthTokens()}
	if !opts.NoBrowser {
		lb, err := browserLoopback(opts.IO, opts.Name, opts.OpenBrowser)
		if err != nil {
			return err
		}
		defer lb.Close()
		o.RedirectURL, o.Authorize = lb.RedirectURL, lb.Authorize
	}
	ro := newRuntimeOptions(f)
	ro.HostOptions = func(ho *host.Options) {
		o.Logger = ho.Logger
		ho.Authorizer = oauth.New(o)
		// A person is approving: the connection may take --timeout, and
		// the host's own bound comes later, so that at --timeout the
		// server is still connecting and the login says why (the two at
		// once raced: "startup timeout: no answer to initialize").
		ho.StartupTimeout = opts.Timeout + 5*time.Second
	}
	s, err := startSessionWith(ctx, &ro, cfg, func(r config.ResolvedServer) bool { return r.Name == opts.Name })
	if err != nil {
		return err
	}
	s.wait(ctx, opts.Timeout)
	var st host.ServerStatus
	for _, x := range s.statuses() {
		if x.Name == opts.Name {
			st = x
		}
	}
	var refused *oauth.TokenRefusedError
	if st.State == host.StateError && errors.As(st.Err, &refused) {
		// Authorized once, and the new token refused: another browser
		// approval would get one more of the same.
		return s.close(Failuref(
			fmt.Sprintf("check that the authorization server grants the scopes %s asks for and tokens for its address (the resource), and that %s accepts that authorization server's tokens; then run `switchboard mcp login %s` again",
				opts.Name, opts.Name, opts.Name),
			"login to %s failed: the server refused the token its authorization server had just issued%s; it was not authorized again",
			opts.Name, termsafe.Line(refused.Why)))
	}
	if st.State != host.StateConnected {
		return s.close(Failuref("", "login to %s failed: %s", opts.Name, termsafe.Line(loginFailure(st, opts.Timeout))))
	}
	file := oauth.TokenFile(dir, opts.Name)
	if _, err := os.Stat(file); err != nil {
		fmt.Fprintf(opts.IO.Out, "%s connected without asking for authorization; there is nothing to store\n", opts.Name)
		return s.close(nil)
	}
	fmt.Fprintf(opts.IO.Out, "Logged in to %s; tokens are in %s\n", opts.Name, termsafe.Line(f.tilde(file)))
	return s.close(nil)
}

// loginFailure says why a login ended without a connection: the
// server's error, or, for one still connecting when --timeout ran out
// (an approval not given in the browser, a server that does not answer),
// that and what it was doing.
func loginFailure(st host.ServerStatus, timeout time.Duration) string {
	switch st.State {
	case host.StateError:
		return st.Reason
	case host.StateConnecting:
		s := "no connection within " + formatElapsed(timeout) + " (--timeout): the authorization was not approved, or the server did not answer"
		if st.Reason != "" && st.Reason != "starting" {
			s += "; " + st.Reason
		}
		return s
	}
	if st.Reason == "" {
		return "the server " + st.State.Phrase()
	}
	return "the server " + st.State.Phrase() + ": " + st.Reason
}

// browserLoopback receives the browser's answer to the authorization of
// server on a loopback port; open (nil: the platform's opener) opens the
// authorization URL, which is printed too.
func browserLoopback(io *IOStreams, server string, open func(string) error) (*oauth.Loopback, error) {
	if open == nil {
		open = openBrowser
	}
	lb, err := oauth.NewLoopback(func(u string) {
		// The authorization server named this URL: shown escaped, so
		// that it cannot hide where it leads.
		fmt.Fprintf(io.ErrOut, "Opening the browser to authorize %s. If it does not open, visit:\n  %s\n", server, termsafe.Line(u))
		_ = open(u)
	})
	if err != nil {
		return nil, FailureErr(err, "")
	}
	return lb, nil
}

// openBrowser asks the platform to open url.
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	return nil
}

// MCPLogoutOptions are the inputs of `mcp logout`.
type MCPLogoutOptions struct {
	IO      *IOStreams
	Factory *Factory
	Name    string
}

// NewMCPLogoutCmd returns `mcp logout`; runF, if not nil, replaces mcpLogoutRun.
func NewMCPLogoutCmd(f *Factory, runF func(context.Context, *MCPLogoutOptions) error) *cobra.Command {
	opts := &MCPLogoutOptions{IO: f.IO, Factory: f}
	return &cobra.Command{
		Use:               "logout NAME",
		Short:             "Forget a remote server's OAuth tokens (and their DPoP key)",
		Args:              exactArgs(1, "a server name"),
		ValidArgsFunction: completeServerNames(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return mcpLogoutRun(cmd.Context(), opts)
		},
	}
}

func mcpLogoutRun(_ context.Context, opts *MCPLogoutOptions) error {
	had, err := oauth.LogoutStore(oauthDir(opts.Factory.Home()), opts.Factory.secretStore().OAuthTokens(), opts.Name)
	if err != nil {
		return FailureErr(err, "")
	}
	if !had {
		return FailureErr(errors.New("not logged in to "+opts.Name), unapprovedHint(opts.Factory, opts.Name))
	}
	fmt.Fprintf(opts.IO.Out, "Logged out of %s\n", opts.Name)
	return nil
}
