// Command gateway serves a workspace's MCP servers as one MCP server over
// Streamable HTTP, with the protections of `switchboard serve --http`
// (gateway.Handler: Origin/Host checks, bearer token, gateway keys or an
// OAuth issuer's access tokens, the session cap, body timeout, both
// protocol revisions, sealed-session scale-out, /healthz):
//
//	SWITCHBOARD_GATEWAY_TOKEN=secret go run ./examples/gateway -http 127.0.0.1:8080 [-workspace DIR]
//
// Off loopback it refuses to start without a credential. A call the rules
// say to ask about is asked of the calling client (an elicitation), else
// denied.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/policy"
)

func main() {
	switchboard.MaybeRunSupervisor() // servers run supervised (and sandboxed) by a copy of this program
	addr := flag.String("http", "127.0.0.1:8080", "listen on `ADDR`")
	ws := flag.String("workspace", ".", "the workspace `DIR`")
	tokenFile := flag.String("token-file", "", "read the bearer token from `FILE` (else $SWITCHBOARD_GATEWAY_TOKEN)")
	authFile := flag.String("auth-file", "", "accept the keys of the gateway auth `FILE` (switchboard gateway key add)")
	issuer := flag.String("oauth-issuer", "", "accept JWT access tokens of the issuer at `URL` (with -resource-url)")
	resource := flag.String("resource-url", "", "the endpoint's `URL` as clients reach it: the tokens' audience")
	keyFile := flag.String("session-key-file", "", "with -stateless: seal sessions with the keys in `FILE`, so that any instance passes their requests on")
	advertise := flag.String("advertise", "", "with -session-key-file: the `URL` the other instances reach this one at (default: the listener's)")
	var origins []string
	flag.Func("allow-origin", "allow browser requests from `ORIGIN` (repeatable)", func(o string) error { origins = append(origins, o); return nil })
	opts := &gateway.HTTPOptions{}
	flag.BoolVar(&opts.Stateless, "stateless", false, "serve without sessions")
	flag.IntVar(&opts.MaxSessions, "max-sessions", gateway.DefaultMaxSessions, "keep at most `N` sessions")
	flag.DurationVar(&opts.BodyTimeout, "body-timeout", gateway.DefaultBodyTimeout, "refuse a request whose body takes longer than `D`")
	wait := flag.Duration("wait", 5*time.Second, "let the first lists wait up to `D` for servers to connect")
	flag.Parse()

	token := os.Getenv("SWITCHBOARD_GATEWAY_TOKEN")
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		check(err)
		token = strings.TrimSpace(string(b))
	}
	ao := &gateway.AuthOptions{SharedToken: token, File: *authFile}
	if *issuer != "" { // an OAuth 2.1 resource server: the issuer's tokens, RFC 9728 metadata
		v, err := gateway.NewJWTVerifier(&gateway.JWTOptions{Issuer: *issuer, Resource: *resource})
		check(err)
		ao.Verify, ao.ResourceMetadataURL, opts.OAuth = v.Verify, v.MetadataURL(), v
	}
	auth := gateway.NewAuth(ao)
	if !auth.Required() && !gateway.IsLoopbackAddr(*addr) {
		check(fmt.Errorf("%s is reachable from other machines: set a token or an auth file with keys", *addr))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Asks go to the calling client, as do the servers' own questions;
	// rules scoped to a caller's key apply.
	asker := &gateway.Asker{}
	permit := func(p *policy.Policy) host.Permit {
		return gateway.NewPermit(p, auth, &host.PermitOptions{Asker: asker})
	}
	prompter := func(ho *host.Options) { ho.Prompter = gateway.Prompter{} }
	sb, err := switchboard.Open(ctx, switchboard.Options{Workspace: *ws, Permit: permit, Host: prompter})
	check(err)
	defer sb.Close()

	ln, err := net.Listen("tcp", *addr)
	check(err)
	// Every HTTP gateway serves a request without a session on its own.
	gopts := &gateway.Options{Stateless: true, Auth: auth, ConnectWait: *wait, FirstSyncWait: *wait + time.Second, CallWait: *wait}
	if *keyFile != "" { // scale-out: session IDs and held calls name this instance
		ring, err := gateway.NewSessionKeyRing(*keyFile, nil)
		check(err)
		if *advertise == "" {
			*advertise = "http://" + ln.Addr().String()
		}
		opts.ScaleOut = gateway.NewScaleOut(*advertise, ring)
		gopts.SessionID, gopts.Instance = opts.ScaleOut.SessionID(), opts.ScaleOut.Instance()
	}
	g := gateway.New(sb, gopts)
	defer g.Close()
	opts.Guard = gateway.NewHTTPGuard(auth, *addr, ln.Addr().String(), origins, nil)
	srv := &http.Server{Handler: g.Handler(opts), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		go srv.Shutdown(sctx) // no new requests
		g.Shutdown(sctx)      // calls in flight get the grace, then are cancelled
		srv.Close()           // and open streams are cut
	}()
	fmt.Fprintf(os.Stderr, "gateway serving http://%s/mcp\n", ln.Addr())
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		check(err)
	}
	<-done
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(2)
	}
}
