package gateway_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/policy"
)

// BenchmarkGatewayCall is the gateway's own cost per call, in one process
// so that a CPU or allocation profile sees it: a Go SDK client calls
// through a Gateway (over an in-memory transport) whose host reaches the
// echo test server over stdio with a PolicyPermit allowing it, as `serve`
// runs. Each iteration also makes one bare call to a second echo server
// process, alternating which goes first, and the p50 of each and their
// ratio are reported from the same run. The process hop of `serve --stdio`
// is not included (internal/cli's BenchmarkCallGateway has it):
//
//	go test ./gateway -run '^$' -bench GatewayCall -benchtime 3000x -count 5 -benchmem
//	go test ./gateway -run '^$' -bench GatewayCall -benchtime 10000x -cpuprofile gw.prof -memprofile gwmem.prof
func BenchmarkGatewayCall(b *testing.B) {
	ctx := context.Background()
	sb, closeSB := openSwitchboard([]config.ResolvedServer{stdio("echo", "echo")}, benchHost)
	defer closeSB()
	h := sb.Host()
	g := gateway.New(sb, nil)
	defer g.Close()
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	h.WaitReady(wctx)
	if err := g.Sync(wctx); err != nil {
		b.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := g.Server().Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()

	name, args := testserver.Command("echo")
	bare, err := mcp.NewClient(&mcp.Implementation{Name: "bare", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}).
		Connect(ctx, &mcp.CommandTransport{Command: exec.Command(name, args...), TerminateDuration: time.Second}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer bare.Close()

	alternate(b, cs, "echo__echo", bare, "echo")
}

// BenchmarkGatewayCallServe is BenchmarkGatewayCall as `serve --http`
// runs the call (less HTTP): metrics on, the permission check of
// gateway.NewPermit with arguments decoded only when a rule reads them
// (host.Options.LazyPermitArgs), and a client and an echo server on
// protocol 2025-11-25, whose calls take the host's relay path (issue 36's
// profile). For the gateway's own work per call:
//
//	go test ./gateway -run '^$' -bench 'GatewayCallServe$' -benchtime 3000x -count 3 -benchmem
func BenchmarkGatewayCallServe(b *testing.B) {
	ctx := context.Background()
	sb, closeSB := openSwitchboard([]config.ResolvedServer{stdio("echo", "echo", "-protocol", "2025-11-25")}, func(ho *host.Options) {
		benchHost(ho)
		ho.Permit = gateway.NewPermit(benchPolicy(), nil, nil)
		ho.LazyPermitArgs = true
	})
	defer closeSB()
	h := sb.Host()
	g := gateway.New(sb, &gateway.Options{Metrics: gateway.NewMetrics(h)})
	defer g.Close()
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	h.WaitReady(wctx)
	if err := g.Sync(wctx); err != nil {
		b.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := g.Server().Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	copts := &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, copts).
		Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()

	name, args := testserver.Command("echo", "-protocol", "2025-11-25")
	bare, err := mcp.NewClient(&mcp.Implementation{Name: "bare", Version: "1"}, copts).
		Connect(ctx, &mcp.CommandTransport{Command: exec.Command(name, args...), TerminateDuration: time.Second},
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	defer bare.Close()

	alternate(b, cs, "echo__echo", bare, "echo")
}

// relayEnv makes this test binary a relay process: a Gateway on stdio
// over a host with the echo test server, as `switchboard serve --stdio`
// runs (PolicyPermit, a JSON log file at info, the jsonl transport, one P
// and GOGC=200 as internal/cli's serve_runtime.go sets). Its value is a
// directory for the log and, if relayProfileEnv is set, a CPU profile of
// the relay.
const (
	relayEnv        = "SWITCHBOARD_BENCH_RELAY"
	relayProfileEnv = "SWITCHBOARD_BENCH_RELAY_CPUPROFILE"
	// relayMemProfileEnv names a file for the relay's allocation profile,
	// written when it exits.
	relayMemProfileEnv = "SWITCHBOARD_BENCH_RELAY_MEMPROFILE"
	// relayGCEnv and relayProcsEnv replace serve's GOGC and GOMAXPROCS
	// in the relay alone, for a before/after.
	relayGCEnv    = "SWITCHBOARD_BENCH_RELAY_GOGC"
	relayProcsEnv = "SWITCHBOARD_BENCH_RELAY_GOMAXPROCS"
)

func init() {
	dir, ok := os.LookupEnv(relayEnv)
	if !ok {
		return
	}
	profile, memProfile := os.Getenv(relayProfileEnv), os.Getenv(relayMemProfileEnv)
	os.Unsetenv(relayEnv) // not for the servers and supervisors it starts
	os.Unsetenv(relayProfileEnv)
	os.Unsetenv(relayMemProfileEnv)
	gcPercent, procs := 200, 1
	if v, err := strconv.Atoi(os.Getenv(relayGCEnv)); err == nil {
		gcPercent = v
	}
	if v, err := strconv.Atoi(os.Getenv(relayProcsEnv)); err == nil {
		procs = v
	}
	os.Unsetenv(relayGCEnv)
	os.Unsetenv(relayProcsEnv)
	debug.SetGCPercent(gcPercent)
	runtime.GOMAXPROCS(procs)
	if profile != "" {
		if f, err := os.Create(profile); err == nil {
			pprof.StartCPUProfile(f)
			defer func() { pprof.StopCPUProfile(); f.Close() }()
		}
	}
	logf, err := os.OpenFile(filepath.Join(dir, "relay.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		panic(err)
	}
	defer logf.Close()
	log := slog.New(slog.NewJSONHandler(logf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	sb, _ := openSwitchboard([]config.ResolvedServer{stdio("echo", "echo")}, func(ho *host.Options) {
		benchHost(ho)
		ho.Logger = log
	})
	h := sb.Host()
	g := gateway.New(sb, &gateway.Options{Logger: log})
	ctx := context.Background()
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	h.WaitReady(wctx)
	cancel()
	g.Sync(ctx)
	// As serve --stdio runs it: Stdio on its stdin and stdout, and
	// Gateway.Run, whose fast path takes plain calls before the SDK's
	// jsonrpc2 layer.
	t, restore := gateway.Stdio(os.Stdin, os.Stdout)
	g.Run(ctx, t)
	restore()
	g.Close()
	h.Close()
	pprof.StopCPUProfile()
	if memProfile != "" {
		if f, err := os.Create(memProfile); err == nil {
			pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}
	}
	os.Exit(0)
}

// BenchmarkGatewayRelay is the relay of `serve --stdio` with its process
// hop: a Go SDK client calls the echo test server through a relay child
// process (this binary: see relayEnv), alternating call by call with a
// bare client of a second echo server process on the same protocol; it
// reports each p50 and their ratio (target ≤ 2.2). Its clients speak
// 2026-07-28, or 2025-11-25 having declared no capabilities, or
// 2025-11-25 having declared elicitation (VS Code's kind). With
// SWITCHBOARD_BENCH_RELAY_CPUPROFILE=file the relay writes its own CPU
// profile (and with SWITCHBOARD_BENCH_RELAY_MEMPROFILE its allocation
// profile; each sub-benchmark's relay writes the same file, so pick one):
//
//	go test ./gateway -run '^$' -bench GatewayRelay -benchtime 3000x -count 5
//	go test -c -o gw.test ./gateway && SWITCHBOARD_BENCH_RELAY_CPUPROFILE=$PWD/relay.prof ./gw.test -test.run '^$' -test.bench 'GatewayRelay/2026' -test.benchtime 10000x
//	go tool pprof -top -cum gw.test relay.prof
func BenchmarkGatewayRelay(b *testing.B) {
	b.Run("2026-07-28", func(b *testing.B) {
		benchGatewayRelay(b, "", &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	})
	b.Run("2025-11-25", func(b *testing.B) {
		benchGatewayRelay(b, "2025-11-25", &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	})
	b.Run("2025-11-25, elicitation", func(b *testing.B) {
		benchGatewayRelay(b, "2025-11-25", &mcp.ClientOptions{
			Capabilities: elicitCaps,
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "decline"}, nil
			},
		})
	})
}

func benchGatewayRelay(b *testing.B, protocol string, copts *mcp.ClientOptions) {
	ctx := context.Background()
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run", "^$")
	cmd.Env = append(os.Environ(), relayEnv+"="+b.TempDir())
	cmd.Stderr = os.Stderr
	so := &mcp.ClientSessionOptions{ProtocolVersion: protocol}
	relay, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, copts).
		Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, so)
	if err != nil {
		b.Fatal(err)
	}
	defer relay.Close()
	name, args := testserver.Command("echo")
	bare, err := mcp.NewClient(&mcp.Implementation{Name: "bare", Version: "1"}, copts).
		Connect(ctx, &mcp.CommandTransport{Command: exec.Command(name, args...), TerminateDuration: time.Second}, so)
	if err != nil {
		b.Fatal(err)
	}
	defer bare.Close()
	alternate(b, relay, "echo__echo", bare, "echo")
}

// alternate calls tool a on sa and tool d on sd once per iteration, which
// goes first alternating, and reports the p50 of each and their ratio.
func alternate(b *testing.B, sa *mcp.ClientSession, a string, sd *mcp.ClientSession, d string) {
	ctx := context.Background()
	arguments := map[string]any{"text": "hello switchboard"}
	call := func(cs *mcp.ClientSession, tool string) time.Duration {
		start := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: arguments})
		el := time.Since(start)
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %v", tool, err, res)
		}
		return el
	}
	call(sa, a) // warm up both
	call(sd, d)
	via := make([]time.Duration, 0, b.N)
	direct := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%2 == 0 {
			via = append(via, call(sa, a))
			direct = append(direct, call(sd, d))
		} else {
			direct = append(direct, call(sd, d))
			via = append(via, call(sa, a))
		}
	}
	b.StopTimer()
	p50 := func(ds []time.Duration) float64 {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return float64(ds[len(ds)/2].Nanoseconds()) / 1e3
	}
	v50, d50 := p50(via), p50(direct)
	b.ReportMetric(d50, "direct-p50-µs")
	b.ReportMetric(v50, "gateway-p50-µs")
	b.ReportMetric(v50/d50, "gateway/direct-p50")
}

// httpGateway is a Gateway over the echo test server served by the SDK's
// Streamable HTTP handler on a loopback listener, as `serve --http` serves
// it (less serve's auth and session bookkeeping), with a PolicyPermit
// allowing the echo tools; it returns the endpoint.
func httpGateway(b *testing.B) string {
	ctx := context.Background()
	sb, closeSB := openSwitchboard([]config.ResolvedServer{stdio("echo", "echo")}, benchHost)
	b.Cleanup(closeSB)
	g := gateway.New(sb, &gateway.Options{FirstSyncWait: 10 * time.Second})
	b.Cleanup(func() { g.Close() })
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := g.WaitSynced(wctx); err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(g.Endpoint(nil))
	b.Cleanup(srv.Close)
	return srv.URL
}

// BenchmarkGatewayHTTP is the HTTP hop in one process, for a CPU or
// allocation profile of it: one Go SDK client calls echo through
// httpGateway, one call at a time, on protocol 2025-11-25 (a session) and
// on 2026-07-28 (no session): from a client that declared no elicitation
// (the call runs on its request) and from one that did, as Claude Code
// and VS Code do (the call is held on a relay worker, where an upstream
// question can wait for the client's retry).
//
//	go test ./gateway -run '^$' -bench 'GatewayHTTP$' -benchtime 10000x -cpuprofile http.prof -memprofile httpmem.prof
func BenchmarkGatewayHTTP(b *testing.B) {
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		b.Run(protocol, func(b *testing.B) { benchGatewayHTTP(b, protocol, &mcp.ClientCapabilities{}) })
	}
	b.Run("2026-07-28, elicitation", func(b *testing.B) {
		benchGatewayHTTP(b, "2026-07-28", &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}})
	})
	// As Claude Code's calls: elicitation declared, a fresh progress token
	// and a key of its own in each call's _meta.
	b.Run("2026-07-28, elicitation, progress token", func(b *testing.B) {
		benchGatewayHTTP(b, "2026-07-28", &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}, "claudecode/callMark")
	})
	// As VS Code's: a session on 2025-11-25 that declared elicitation, a
	// fresh progress token and keys of its own in each call's _meta.
	b.Run("2025-11-25, elicitation, progress token", func(b *testing.B) {
		benchGatewayHTTP(b, "2025-11-25", &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}, "vscode.conversationId", "vscode.requestId")
	})
}

// benchGatewayHTTP calls echo through httpGateway b.N times from a client
// on protocol that declared caps; with keys, each call's _meta holds a
// fresh progress token and those keys.
func benchGatewayHTTP(b *testing.B, protocol string, caps *mcp.ClientCapabilities, keys ...string) {
	ctx := context.Background()
	url := httpGateway(b)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ClientOptions{Capabilities: caps}).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ProtocolVersion; got != protocol {
		b.Fatalf("protocol %s, want %s", got, protocol)
	}
	params := &mcp.CallToolParams{Name: "echo__echo", Arguments: map[string]any{"text": "hello switchboard"}}
	if _, err := cs.CallTool(ctx, params); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if len(keys) > 0 {
			params.Meta = mcp.Meta{"progressToken": "t" + strconv.Itoa(i)}
			for _, k := range keys {
				params.Meta[k] = "x"
			}
		}
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatalf("call: %v %v", err, res)
		}
	}
}

// BenchmarkGatewayIdleSessions is the memory an idle HTTP session holds in
// the gateway's process: it opens b.N sessions (each initialized, its
// tools listed once, then left alone) and reports the growth of the live
// heap per session after a GC. The client's half of each session lives in
// the same process and is counted apart, by the same measure on a bare
// SDK server (BenchmarkSDKIdleSessions), so the difference is the
// gateway's.
//
//	go test ./gateway -run '^$' -bench 'IdleSessions' -benchtime 500x
func BenchmarkGatewayIdleSessions(b *testing.B) {
	idleSessions(b, httpGateway(b))
}

// BenchmarkSDKIdleSessions is BenchmarkGatewayIdleSessions on a bare Go
// SDK server with one echo tool: the floor.
func BenchmarkSDKIdleSessions(b *testing.B) {
	s := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	b.Cleanup(srv.Close)
	idleSessions(b, srv.URL)
}

// heapProfileEnv names a file for a heap profile taken while the idle
// sessions are open (run with -test.memprofilerate 512 to see small
// objects).
const heapProfileEnv = "SWITCHBOARD_BENCH_IDLE_HEAPPROFILE"

func idleSessions(b *testing.B, url string) {
	ctx := context.Background()
	// One session first, so that what every session shares (the client's
	// HTTP transport, the server's first allocations) is not counted.
	open := func() *mcp.ClientSession {
		// A session of the protocol most clients speak today, which holds
		// a standalone stream (2026-07-28 has neither).
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := cs.ListTools(ctx, nil); err != nil {
			b.Fatal(err)
		}
		return cs
	}
	first := open()
	defer first.Close()
	heap := func() (uint64, uint64, int) {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc, m.StackInuse, runtime.NumGoroutine()
	}
	before, beforeStack, beforeG := heap()
	sessions := make([]*mcp.ClientSession, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sessions = append(sessions, open())
	}
	b.StopTimer()
	after, afterStack, afterG := heap()
	if path := os.Getenv(heapProfileEnv); path != "" {
		if f, err := os.Create(path); err == nil {
			pprof.Lookup("heap").WriteTo(f, 0)
			f.Close()
		}
		if f, err := os.Create(path + ".g"); err == nil {
			pprof.Lookup("goroutine").WriteTo(f, 1)
			f.Close()
		}
	}
	b.ReportMetric(float64(int64(after)-int64(before))/float64(b.N), "heap-B/session")
	b.ReportMetric(float64(int64(afterStack)-int64(beforeStack))/float64(b.N), "stack-B/session")
	b.ReportMetric(float64(afterG-beforeG)/float64(b.N), "goroutines/session")
	for _, cs := range sessions {
		cs.Close()
	}
}

// BenchmarkGatewayFirstSync is the time from New to the end of the
// gateway's first sync, over a host whose echo server is connected: what
// a client's first call waits for (Options.FirstSyncWait) after serve
// starts, less the server's own start.
//
//	go test ./gateway -run '^$' -bench GatewayFirstSync -benchtime 50x -count 6
func BenchmarkGatewayFirstSync(b *testing.B) {
	ctx := context.Background()
	sb, closeSB := openSwitchboard([]config.ResolvedServer{stdio("echo", "echo")}, func(ho *host.Options) {
		ho.CloseGrace = 500 * time.Millisecond
	})
	defer closeSB()
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	sb.Ready(wctx)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g := gateway.New(sb, &gateway.Options{FirstSyncWait: 10 * time.Second})
		if err := g.WaitSynced(wctx); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		g.Close()
		b.StartTimer()
	}
}

// benchHost is the host of the benchmarks: a PolicyPermit allowing the
// echo server's tools but its destructive one.
func benchHost(ho *host.Options) {
	ho.CloseGrace = 500 * time.Millisecond
	ho.Permit = host.PolicyPermit(benchPolicy(), nil)
}

// benchPolicy allows the echo server's tools but one.
func benchPolicy() *policy.Policy {
	return policy.New(policy.RulesFrom(policy.Source{Scope: policy.ScopeUser},
		[]string{"mcp__echo"}, nil, []string{"mcp__echo__destructive"})...)
}
