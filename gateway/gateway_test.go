package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/jsonl"
	"github.com/switchboard-mcp/switchboard/internal/proc"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/policy"
)

// TestMain lets this test binary double as the test servers and as the
// process supervisor, so upstream servers are real child processes.
func TestMain(m *testing.M) {
	proc.MaybeRunSupervisor()
	testserver.MaybeRun()
	os.Exit(m.Run())
}

func stdio(name, ts string, args ...string) config.ResolvedServer {
	cmd, a := testserver.Command(ts, args...)
	def := config.Server{Type: config.TypeStdio, Command: cmd, Args: a}
	return config.ResolvedServer{
		Name: name, Written: def, Effective: def,
		Scope: config.ScopeUser, Trust: config.TrustUser, Availability: config.Available,
	}
}

// openSwitchboard opens a Switchboard on servers alone, in a temporary
// home (nothing of the machine's own is read), with no rules of the front
// door's: hook adjusts the host's options (its Permit, if it sets one,
// decides). close closes it and removes the home.
func openSwitchboard(servers []config.ResolvedServer, hook func(*host.Options)) (sb *switchboard.Switchboard, close func()) {
	dir, err := os.MkdirTemp("", "gateway-test-")
	if err != nil {
		panic(err)
	}
	cfg := &config.Resolved{Servers: servers}
	sb, err = switchboard.Open(context.Background(), switchboard.Options{
		Home: filepath.Join(dir, "sb"), HomeDir: dir, ManagedDir: filepath.Join(dir, "managed"),
		LookupEnv: func(string) (string, bool) { return "", false },
		Load:      func() (*config.Resolved, error) { return cfg, nil },
		Permit:    func(*policy.Policy) host.Permit { return nil },
		Host: func(ho *host.Options) {
			ho.LookupEnv = func(string) (string, bool) { return "", false }
			if hook != nil {
				hook(ho)
			}
		},
	})
	if err != nil {
		panic(err)
	}
	return sb, func() { sb.Close(); os.RemoveAll(dir) }
}

// openSB is openSwitchboard for a test, closed when it ends.
func openSB(t testing.TB, servers []config.ResolvedServer, hook func(*host.Options)) *switchboard.Switchboard {
	t.Helper()
	sb, close := openSwitchboard(servers, hook)
	t.Cleanup(close)
	return sb
}

// fixtureOpts adjust the host a fixture builds.
type fixtureOpts struct {
	permit   host.Permit
	prompter host.Prompter
	client   *mcp.ClientOptions
	protocol string // the client's protocol version ("" for the latest)
	// pipe connects the client over a pair of OS pipes with the
	// transport of `serve --stdio`, instead of in memory.
	pipe bool
	// run serves those pipes with Gateway.Run, as `serve --stdio` does,
	// fast path and all (pipe alone: the SDK's path, Server().Connect).
	run bool
	// logger is the host's (nil: discard).
	logger *slog.Logger
	// host, if set, adjusts the host's options last.
	host func(*host.Options)
}

type fixture struct {
	sb      *switchboard.Switchboard
	h       *host.Host
	g       *gateway.Gateway
	session *mcp.ClientSession
	changed chan struct{} // one value per tools/list_changed the client got
	run     bool          // fixtureOpts.run
}

// start runs a host on servers, a gateway on it and a Go SDK client
// connected to the gateway over an in-memory transport.
func start(t *testing.T, gopts *gateway.Options, servers ...config.ResolvedServer) *fixture {
	t.Helper()
	return startWith(t, fixtureOpts{}, gopts, servers...)
}

func startWith(t *testing.T, fo fixtureOpts, gopts *gateway.Options, servers ...config.ResolvedServer) *fixture {
	t.Helper()
	f := &fixture{changed: make(chan struct{}, 64), run: fo.run}
	fo.pipe = fo.pipe || fo.run
	f.sb = openSB(t, servers, func(ho *host.Options) {
		ho.Logger = fo.logger
		ho.CloseGrace = 500 * time.Millisecond
		ho.Permit = fo.permit
		ho.Prompter = fo.prompter
		if fo.host != nil {
			fo.host(ho)
		}
	})
	f.h = f.sb.Host()
	f.g = gateway.New(f.sb, gopts)
	t.Cleanup(func() { f.g.Close() })
	ctx := ctxFor(t, 30*time.Second)
	f.h.WaitReady(ctx)
	if err := f.g.Sync(ctx); err != nil {
		// What each server was doing: a fixture that did not come up
		// once under a loaded CI run said no more than the deadline.
		var states []string
		for _, st := range f.h.Status() {
			states = append(states, fmt.Sprintf("%s: %s since %s (%s)", st.Name, st.State, st.Since.Format(time.RFC3339Nano), st.Reason))
		}
		t.Fatalf("Sync: %v\nservers: %s", err, strings.Join(states, "; "))
	}
	copts := fo.client
	if copts == nil {
		copts = &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}
	}
	copts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) {
		select {
		case f.changed <- struct{}{}:
		default:
		}
	}
	f.session = f.connect(t, fo.pipe, copts, fo.protocol)
	return f
}

// connect connects one more Go SDK client to the fixture's gateway, over
// OS pipes (pipe; served with Gateway.Run if the fixture runs) or in
// memory, on protocol ("" for the latest).
func (f *fixture) connect(t *testing.T, pipe bool, copts *mcp.ClientOptions, protocol string) *mcp.ClientSession {
	t.Helper()
	ctx := ctxFor(t, 30*time.Second)
	var ct, st mcp.Transport
	if pipe {
		sr, sw, cr, cw := clientPipes(t)
		st = &jsonl.Transport{Reader: sr, Writer: sw}
		ct = &mcp.IOTransport{Reader: cr, Writer: cw}
	} else {
		ct, st = mcp.NewInMemoryTransports()
	}
	if pipe && f.run {
		rctx, stop := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			f.g.Run(rctx, st)
		}()
		t.Cleanup(func() { stop(); <-done })
	} else {
		ss, err := f.g.Server().Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ss.Close() })
	}
	if copts == nil {
		copts = &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, copts)
	var so *mcp.ClientSessionOptions
	if protocol != "" {
		so = &mcp.ClientSessionOptions{ProtocolVersion: protocol}
	}
	cs, err := client.Connect(ctx, ct, so)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func toolNames(t *testing.T, ctx context.Context, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("listing tools: %v", err)
		}
		names = append(names, tool.Name)
	}
	return names
}

func has(names []string, want string) bool {
	for _, n := range names {
		if n == want {
			return true
		}
	}
	return false
}

func textOf(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	var b strings.Builder
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			t.Fatalf("content %T, want text", c)
		}
		b.WriteString(tc.Text)
	}
	return b.String()
}

func TestToolsOfTwoServersAndCall(t *testing.T) {
	f := start(t, nil, stdio("alpha", "echo"), stdio("beta", "echo"))
	ctx := ctxFor(t, 30*time.Second)
	names := toolNames(t, ctx, f.session)
	for _, want := range []string{"alpha__echo", "beta__echo", "alpha__add", "beta__slow"} {
		if !has(names, want) {
			t.Errorf("tools lack %s; got %v", want, names)
		}
	}
	res, err := f.session.CallTool(ctx, &mcp.CallToolParams{Name: "beta__echo", Arguments: map[string]any{"text": "hi there"}})
	if err != nil {
		t.Fatal(err)
	}
	got := textOf(t, res)
	want := "<mcp_response server=\"beta\" tool=\"echo\" trust=\"untrusted\">\nhi there\n</mcp_response>"
	if res.IsError || got != want {
		t.Errorf("call = %q (isError %v), want %q", got, res.IsError, want)
	}

	// Every schema a client sees is an object.
	for tool, err := range f.session.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(tool.InputSchema)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil || m["type"] != "object" {
			t.Errorf("%s: schema %s is not an object", tool.Name, b)
		}
	}
}

func TestToolErrorIsAResult(t *testing.T) {
	f := start(t, nil, stdio("alpha", "echo"))
	ctx := ctxFor(t, 30*time.Second)
	res, err := f.session.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__error_result", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(textOf(t, res), `is_error="true"`) {
		t.Errorf("error_result came back as %q (isError %v)", textOf(t, res), res.IsError)
	}
}

func TestProgressIsForwarded(t *testing.T) {
	f := start(t, nil, stdio("alpha", "echo"))
	ctx := ctxFor(t, 30*time.Second)
	var mu sync.Mutex
	var got []string
	// A second client, with a progress handler.
	ct, st := mcp.NewInMemoryTransports()
	ss, err := f.g.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	client := mcp.NewClient(&mcp.Implementation{Name: "progress-client"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			got = append(got, req.Params.ProgressToken.(string)+" "+req.Params.Message)
			mu.Unlock()
		},
	})
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "alpha__slow", Arguments: map[string]any{"ms": 600, "steps": 3}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(ctx, params)
	if err != nil || res.IsError {
		t.Fatalf("slow: %v %v", err, res)
	}
	// The last notification may race the result (the host stops listening
	// for a call's progress when its result arrives), so only the earlier
	// steps are certain; every one must carry the client's own token.
	mu.Lock()
	defer mu.Unlock()
	if len(got) < 2 || got[0] != "tok-1 step 1 of 3" || got[1] != "tok-1 step 2 of 3" {
		t.Errorf("progress = %q, want steps 1 and 2 (and maybe 3) under tok-1", got)
	}
}

// TestCancellationReachesUpstream: a client's cancelled call reaches the
// upstream server as notifications/cancelled. The cancel-log server's wait
// tool blocks until then and logs both its start and every cancellation it
// receives, so without the gateway's forwarding the log never says
// "cancelled" and the test fails at its deadline.
func TestCancellationReachesUpstream(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "cancel.log")
	f := start(t, nil, stdio("alpha", "cancel-log", "-cancel-file", logFile))
	ctx := ctxFor(t, 30*time.Second)
	cctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := f.session.CallTool(cctx, &mcp.CallToolParams{Name: "alpha__wait", Arguments: map[string]any{}})
		errc <- err
	}()
	waitLogLine(t, ctx, logFile, "started")
	cancel()
	select {
	case err := <-errc:
		if err == nil {
			t.Fatal("cancelled call returned no error")
		}
	case <-ctx.Done():
		t.Fatal("cancelled call did not return")
	}
	waitLogLine(t, ctx, logFile, "cancelled ")
	// The upstream server is still usable: the cancelled call ended there
	// rather than holding it.
	res, err := f.session.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "after"}})
	if err != nil || res.IsError {
		t.Fatalf("call after cancel: %v %v", err, res)
	}
}

// waitLogLine waits until a line of file starts with prefix, failing when
// ctx ends first.
func waitLogLine(t *testing.T, ctx context.Context, file, prefix string) {
	t.Helper()
	for {
		b, _ := os.ReadFile(file)
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, prefix) {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s has no line starting %q: %q", file, prefix, b)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func TestPromptsAndResources(t *testing.T) {
	f := start(t, nil, stdio("alpha", "echo"), stdio("beta", "echo"))
	ctx := ctxFor(t, 30*time.Second)
	var prompts []string
	for p, err := range f.session.Prompts(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		prompts = append(prompts, p.Name)
	}
	if diff := cmp.Diff([]string{"alpha:greet", "beta:greet"}, prompts); diff != "" {
		t.Errorf("prompts (-want +got):\n%s", diff)
	}
	pr, err := f.session.GetPrompt(ctx, &mcp.GetPromptParams{Name: "beta:greet", Arguments: map[string]string{"name": "Ada"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := pr.Messages[0].Content.(*mcp.TextContent).Text; got != "Say hello to Ada." {
		t.Errorf("prompt text %q", got)
	}
	// Both servers offer test://echo/readme: it is listed once.
	var uris []string
	for r, err := range f.session.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		uris = append(uris, r.URI)
	}
	if diff := cmp.Diff([]string{"test://echo/readme"}, uris); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
	rr, err := f.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://echo/readme"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rr.Contents[0].Text, "echo test server") {
		t.Errorf("resource text %q", rr.Contents[0].Text)
	}
}

func TestListChangedFollowsUpstream(t *testing.T) {
	f := start(t, nil, stdio("alpha", "echo"))
	ctx := ctxFor(t, 30*time.Second)
	if has(toolNames(t, ctx, f.session), "alpha__fresh") {
		t.Fatal("fresh exists before add_tool")
	}
	drain(f.changed)
	res, err := f.session.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__add_tool", Arguments: map[string]any{"name": "fresh"}})
	if err != nil || res.IsError {
		t.Fatalf("add_tool: %v %v", err, res)
	}
	waitTool(t, ctx, f, "alpha__fresh", true)
}

func TestAdminPauseResume(t *testing.T) {
	f := start(t, &gateway.Options{AdminTools: true}, stdio("alpha", "echo"), stdio("beta", "echo"))
	ctx := ctxFor(t, 30*time.Second)
	names := toolNames(t, ctx, f.session)
	if !has(names, gateway.PauseTool) || !has(names, gateway.ResumeTool) {
		t.Fatalf("admin tools missing: %v", names)
	}
	drain(f.changed)
	res, err := f.session.CallTool(ctx, &mcp.CallToolParams{Name: gateway.PauseTool, Arguments: map[string]any{"server": "beta"}})
	if err != nil || res.IsError {
		t.Fatalf("pause: %v %v", err, res)
	}
	waitTool(t, ctx, f, "beta__echo", false)
	if !has(toolNames(t, ctx, f.session), "alpha__echo") {
		t.Error("pausing beta removed alpha's tools")
	}
	res, err = f.session.CallTool(ctx, &mcp.CallToolParams{Name: gateway.ResumeTool, Arguments: map[string]any{"server": "beta"}})
	if err != nil || res.IsError {
		t.Fatalf("resume: %v %v", err, res)
	}
	waitTool(t, ctx, f, "beta__echo", true)

	res, err = f.session.CallTool(ctx, &mcp.CallToolParams{Name: gateway.PauseTool, Arguments: map[string]any{"server": "nope"}})
	if err != nil || !res.IsError || !strings.Contains(textOf(t, res), "unknown server") {
		t.Errorf("pause of an unknown server: %v %v", err, res)
	}
}

func drain(c chan struct{}) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}

// waitTool waits for a tools/list_changed after which the tool is (or is
// not) listed.
func waitTool(t *testing.T, ctx context.Context, f *fixture, name string, present bool) {
	t.Helper()
	for {
		select {
		case <-f.changed:
			if has(toolNames(t, ctx, f.session), name) == present {
				return
			}
		case <-ctx.Done():
			t.Fatalf("no list_changed making %s present=%v; tools: %v", name, present, toolNames(t, context.Background(), f.session))
		}
	}
}

// clientPipes makes the OS pipes between a client and the gateway: the
// gateway reads sr and writes sw, the client reads cr and writes cw. The
// test's cleanup closes all four.
// goingClient connects a client with opts (nil: one that declared no
// capabilities) to f's gateway over pipes and returns it with its ends of
// them: closing both is the client going away, as when its process dies.
func goingClient(t *testing.T, ctx context.Context, f *fixture, opts *mcp.ClientOptions) (cs *mcp.ClientSession, cr, cw *os.File) {
	t.Helper()
	sr, sw, cr, cw := clientPipes(t)
	ss, err := f.g.Server().Connect(ctx, &jsonl.Transport{Reader: sr, Writer: sw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	if opts == nil {
		opts = &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}
	}
	cs, err = mcp.NewClient(&mcp.Implementation{Name: "going", Version: "1"}, opts).
		Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs, cr, cw
}

func clientPipes(t *testing.T) (sr, sw, cr, cw *os.File) {
	t.Helper()
	sr, cw, err := os.Pipe() // client → gateway
	if err != nil {
		t.Fatal(err)
	}
	cr, sw, err = os.Pipe() // gateway → client
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, p := range []*os.File{sr, cw, cr, sw} {
			p.Close()
		}
	})
	return sr, sw, cr, cw
}
