package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/netguard"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
	"github.com/switchboard-mcp/switchboard/oauth"
	"github.com/switchboard-mcp/switchboard/toolsurface"
)

// GatewayLoginOptions are the inputs of `switchboard gateway login|logout`.
type GatewayLoginOptions struct {
	IO      *IOStreams
	URL     string
	KeyFile string
	Server  string
	Getenv  func(string) (string, bool)
	Logout  bool
	// ClientID and ClientSecret name a pre-registered client; NoBrowser
	// follows the authorization redirect without a browser; Timeout bounds
	// the login (as for `mcp login`).
	ClientID, ClientSecret string
	NoBrowser              bool
	Timeout                time.Duration
	// OpenBrowser opens a URL; if nil, the platform's opener is used.
	OpenBrowser func(url string) error
}

func newGatewayLoginCmds(f *Factory) []*cobra.Command {
	var cmds []*cobra.Command
	for _, logout := range []bool{false, true} {
		o := &GatewayLoginOptions{IO: f.IO, Getenv: f.Getenv, Logout: logout}
		cmd := &cobra.Command{
			Use:   "login SERVER",
			Short: "Log in to a team gateway's per-member server with your own OAuth account",
			Long: `A team gateway may call some remote servers as each member, with the member's
own OAuth login (docs/gateway.md, Each member's own credentials). "gateway login
SERVER" asks the gateway where SERVER is, runs its OAuth login here (your
browser, a loopback redirect, PKCE), and hands the tokens to the gateway, which
keeps them under your principal, refreshes them, and uses them for your calls
only. Your gateway key (or access token) comes from $` + MemberKeyEnv + ` or --key-file.`,
			Args: exactArgs(1, "a server name"),
			RunE: func(cmd *cobra.Command, args []string) error {
				o.Server = args[0]
				return gatewayLoginRun(cmd.Context(), o)
			},
		}
		if logout {
			cmd.Use, cmd.Short, cmd.Long = "logout SERVER", "Make a team gateway forget your own OAuth login to SERVER", ""
		} else {
			cmd.Flags().StringVar(&o.ClientID, "client-id", "", "a client ID registered with the authorization server")
			cmd.Flags().StringVar(&o.ClientSecret, "client-secret", "", "the secret of --client-id, if it has one")
			cmd.Flags().BoolVar(&o.NoBrowser, "no-browser", false, "follow the authorization redirect without a browser (servers that approve on their own)")
			cmd.Flags().DurationVar(&o.Timeout, "timeout", 5*time.Minute, "how long to wait for the approval")
		}
		cmd.Flags().StringVar(&o.URL, "url", "", "the gateway's `URL` (https://…, or http:// on a loopback address; /mcp may end it)")
		cmd.Flags().StringVar(&o.KeyFile, "key-file", "", "read your gateway key or access token from `FILE` (else $"+MemberKeyEnv+")")
		cmds = append(cmds, cmd)
	}
	return cmds
}

func gatewayLoginRun(ctx context.Context, o *GatewayLoginOptions) error {
	if o.URL == "" {
		return Usagef("e.g. --url https://gw.example.com", "gateway %s needs the gateway's --url", map[bool]string{false: "login", true: "logout"}[o.Logout])
	}
	if !config.ValidName(o.Server) {
		return Usagef("", "%q is not a server name", o.Server)
	}
	if o.ClientSecret != "" && o.ClientID == "" {
		return Usagef("pass --client-id with --client-secret", "--client-secret needs --client-id")
	}
	target, err := memberURL(o.URL, MemberOAuthPath+o.Server)
	if err != nil {
		return err
	}
	key, err := memberKey(o.KeyFile, o.Getenv)
	if err != nil {
		return err
	}
	// gw sends a request to the gateway and reads its answer, which must
	// have status want.
	gw := func(method string, body []byte, want int, read func(io.Reader) error) error {
		rctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(rctx, method, target, bytes.NewReader(body))
		if err != nil {
			return FailureErr(err, "")
		}
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return FailureErr(fmt.Errorf("reaching the gateway: %w", err), "")
		}
		defer resp.Body.Close()
		if resp.StatusCode != want {
			return FailureErr(memberSecretError(resp), "")
		}
		if read != nil {
			return read(io.LimitReader(resp.Body, 64<<10))
		}
		return nil
	}
	if o.Logout {
		if err := gw(http.MethodDelete, nil, http.StatusNoContent, nil); err != nil {
			return err
		}
		fmt.Fprintf(o.IO.ErrOut, "The gateway forgot your login to %s.\n", o.Server)
		return nil
	}

	// Where to log in: the gateway names the upstream's URL.
	var info memberLoginInfo
	err = gw(http.MethodGet, nil, http.StatusOK, func(r io.Reader) error {
		if err := json.NewDecoder(r).Decode(&info); err != nil || info.URL == "" {
			return Failuref("", "the gateway's answer about %s is not where to log in", o.Server)
		}
		return nil
	})
	if err != nil {
		return err
	}

	data, err := memberLogin(ctx, o, info)
	if err != nil {
		return err
	}
	if data == nil {
		fmt.Fprintf(o.IO.Out, "%s connected without asking for authorization; there is no login to hand to the gateway\n", o.Server)
		return nil
	}
	if err := gw(http.MethodPut, data, http.StatusNoContent, nil); err != nil {
		return err
	}
	fmt.Fprintf(o.IO.Out, "Logged in to %s; the gateway keeps your tokens and uses them for your calls from the next one on\n", o.Server)
	return nil
}

// memberLogin runs the OAuth login of the upstream server info names, on
// this machine, into a token directory of its own that is removed after:
// it returns the login (oauth.ExportLogin's), or nil when the server
// asked for none. Nothing of it stays here.
// maxLoginError bounds, in characters, the error a failed member login
// prints, as a server's status reason is bounded.
const maxLoginError = 2000

func memberLogin(ctx context.Context, o *GatewayLoginOptions, info memberLoginInfo) ([]byte, error) {
	dir, err := os.MkdirTemp("", "switchboard-login-")
	if err != nil {
		return nil, FailureErr(err, "")
	}
	defer os.RemoveAll(dir)
	oo := &oauth.Options{Dir: dir, ClientID: o.ClientID, ClientSecret: o.ClientSecret, NoBrowser: o.NoBrowser, Fresh: true,
		Logger: slog.New(slog.DiscardHandler)}
	if !o.NoBrowser {
		lb, err := browserLoopback(o.IO, o.Server, o.OpenBrowser)
		if err != nil {
			return nil, err
		}
		defer lb.Close()
		oo.RedirectURL, oo.Authorize = lb.RedirectURL, lb.Authorize
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	// The gateway named the URL: held to the policy of a server the user
	// wrote (docs/security.md, Outbound URL safety), so that it can never
	// point this machine at a metadata or link-local address.
	guard := netguard.Policy{AllowPrivate: true}
	out := guard.Transport(nil)
	// Its answers are held to the size a server's are (a gateway that
	// never ends one must not fill this process's memory).
	rt := netguard.LimitAnswers(oauth.New(oo).Transport(ctx, o.Server, info.URL, out, out), info.Type == config.TypeSSE)
	hc := &http.Client{Transport: rt, CheckRedirect: guard.CheckRedirect}
	var t mcp.Transport = &mcp.StreamableClientTransport{Endpoint: info.URL, HTTPClient: hc, MaxRetries: -1}
	if info.Type == config.TypeSSE {
		t = &mcp.SSEClientTransport{Endpoint: info.URL, HTTPClient: hc}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "switchboard", Version: buildVersion()}, nil).Connect(ctx, t, nil)
	if err != nil {
		// The error may quote what the server sent (megabytes of it).
		return nil, Failuref("", "login to %s (%s) failed: %s", o.Server, termsafe.Line(info.URL),
			termsafe.Line(toolsurface.CapDescription(err.Error(), maxLoginError)))
	}
	_ = cs.Close()
	data, err := oauth.ExportLogin(dir, o.Server)
	if err != nil {
		return nil, FailureErr(fmt.Errorf("the login to %s cannot be handed to the gateway: %w", o.Server, err), "")
	}
	return data, nil
}
