package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// allowAll is the --settings that lets the gateway run the bench servers'
// tools: a call no rule allows is asked, and the bench clients cannot answer.
func allowSettings(servers ...string) string {
	rules := ""
	for i, s := range servers {
		if i > 0 {
			rules += ","
		}
		rules += `"mcp__` + s + `"`
	}
	return `{"permissions":{"allow":[` + rules + `]}}`
}

// serveArgs are the arguments of `switchboard serve` on the servers in cfg,
// written to a file in a fresh sandbox; home is that sandbox's HOME.
func (b *bench) serveArgs(name string, cfg map[string]stdioServer, mode ...string) (args []string, home string, err error) {
	home, work, err := b.sandbox(name)
	if err != nil {
		return nil, "", err
	}
	file := filepath.Join(work, "servers.json")
	if err := writeJSON(file, map[string]any{"mcpServers": cfg}); err != nil {
		return nil, "", err
	}
	var names []string
	for n := range cfg {
		names = append(names, n)
	}
	args = append([]string{"serve"}, mode...)
	args = append(args, "--no-watch", "--strict-mcp-config", "--mcp-config", file, "--settings", allowSettings(names...))
	return args, home, nil
}

// gateway: the gateway's memory with 1 and 20 connected servers, and HTTP
// throughput with 16 concurrent clients. The stdio relay's latency is a row
// of the latency scenario.
func (b *bench) gateway() error {
	if _, err := b.switchboard(); err != nil {
		return err
	}
	var rss1, rss20, sup20, tput, p50, p99 []float64
	for r := range b.rounds {
		one, _, err := b.gatewayRSS(1)
		if err != nil {
			return err
		}
		twenty, sup, err := b.gatewayRSS(20)
		if err != nil {
			return err
		}
		rss1, rss20, sup20 = append(rss1, one), append(rss20, twenty), append(sup20, sup)
		t, q50, q99, err := b.gatewayHTTP(16, max(b.n/4, 200))
		if err != nil {
			return err
		}
		tput, p50, p99 = append(tput, t), append(p50, q50), append(p99, q99)
		fmt.Fprintf(os.Stderr, "  round %d  RSS 1 server %.1f MiB, 20 servers %.1f MiB (supervisor's PSS %.1f MiB)  HTTP %.0f calls/s p50 %.0f µs p99 %.0f µs\n", r+1, one, twenty, sup, t, q50, q99)
	}
	tb := &table{
		title: fmt.Sprintf("Gateway (`switchboard serve`, medians of %d rounds)", b.rounds),
		head:  []string{"measure", "value", "target"},
	}
	tb.add("serve --stdio RSS, 1 connected server (MiB)", median(rss1), "")
	tb.add("serve --stdio RSS, 20 connected servers (MiB)", median(rss20), "≤ 40 MiB")
	tb.add("per extra server (MiB)", (median(rss20)-median(rss1))/19, "report")
	tb.add("its supervisor process (one for all servers): PSS (MiB)", median(sup20), "report")
	tb.add("serve --http, 16 concurrent clients: calls/s", median(tput), "report")
	tb.add("serve --http, 16 concurrent clients: p50 µs", median(p50), "")
	tb.add("serve --http, 16 concurrent clients: p99 µs", median(p99), "report")
	tb.note("RSS is the serve process's VmRSS after a client listed every server's tools (servers and supervisors not counted).")
	tb.note("The stdio servers run under one supervisor process (internal/proc); its PSS (/proc/<pid>/smaps_rollup: private pages plus its share of the binary's pages) is counted apart.")
	tb.note("HTTP: %d Go SDK clients over Streamable HTTP on loopback, each making %d sequential echo calls to one Go echo server behind the gateway.", 16, max(b.n/4, 200))
	tb.print()
	return nil
}

// gatewayRSS starts `serve --stdio` on n fast servers, waits until a client
// sees all their tools, and returns the serve process's RSS and the PSS of
// its children (its supervisor), in MiB.
func (b *bench) gatewayRSS(n int) (float64, float64, error) {
	args, home, err := b.serveArgs("gateway", servers("fast", n, b.sbServer("echo")))
	if err != nil {
		return 0, 0, err
	}
	cmd := exec.Command(b.sb, args...)
	cmd.Env = env(home)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("connecting to serve --stdio: %w", err)
	}
	defer cs.Close()
	for {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			return 0, 0, fmt.Errorf("tools/list through the gateway: %w", err)
		}
		servers := map[string]bool{}
		for _, t := range res.Tools {
			if s, _, ok := cutServer(t.Name); ok {
				servers[s] = true
			}
		}
		if len(servers) >= n {
			break
		}
		select {
		case <-ctx.Done():
			return 0, 0, fmt.Errorf("only %d of %d servers' tools appeared through the gateway", len(servers), n)
		case <-time.After(50 * time.Millisecond):
		}
	}
	rss := vmRSS(cmd.Process.Pid)
	if rss == 0 {
		return 0, 0, errors.New("cannot read the gateway's RSS")
	}
	return float64(rss) / 1024, float64(childrenPSS(cmd.Process.Pid)) / 1024, nil
}

// cutServer splits mcp__<server>__<tool>.
func cutServer(name string) (server, tool string, ok bool) {
	const p = "mcp__"
	if len(name) <= len(p) || name[:len(p)] != p {
		return "", "", false
	}
	rest := name[len(p):]
	for i := 0; i+1 < len(rest); i++ {
		if rest[i] == '_' && rest[i+1] == '_' {
			return rest[:i], rest[i+2:], true
		}
	}
	return "", "", false
}

// gatewayHTTP serves one echo server over `serve --http` on loopback and
// drives it with clients concurrent clients of calls calls each; it returns
// calls per second and the p50 and p99 latency in µs.
func (b *bench) gatewayHTTP(clients, calls int) (float64, float64, float64, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, 0, 0, err
	}
	addr := l.Addr().String()
	l.Close()
	args, home, err := b.serveArgs("gateway-http", map[string]stdioServer{"srv": b.sbServer("echo")}, "--http", addr)
	if err != nil {
		return 0, 0, 0, err
	}
	cmd := exec.Command(b.sb, args...)
	cmd.Env = env(home)
	if err := cmd.Start(); err != nil {
		return 0, 0, 0, err
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		_ = waitBounded(cmd, 10*time.Second)
	}()
	endpoint := "http://" + addr + "/mcp"
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			return 0, 0, 0, fmt.Errorf("serve --http did not answer /healthz: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sessions := make([]*mcp.ClientSession, clients)
	for i := range sessions {
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
		if err != nil {
			return 0, 0, 0, fmt.Errorf("client %d: %w", i, err)
		}
		defer cs.Close()
		sessions[i] = cs
	}
	params := &mcp.CallToolParams{Name: "mcp__srv__echo", Arguments: map[string]any{"text": "hello switchboard"}}
	call := func(cs *mcp.ClientSession) error {
		res, err := cs.CallTool(ctx, params)
		if err == nil && res.IsError {
			err = fmt.Errorf("tool error: %v", res.Content)
		}
		return err
	}
	for _, cs := range sessions { // warm up: the gateway connects the server and routes the name
		if err := call(cs); err != nil {
			return 0, 0, 0, fmt.Errorf("warm-up call through the gateway: %w", err)
		}
	}
	var (
		mu   sync.Mutex
		all  []time.Duration
		wg   sync.WaitGroup
		errs = make(chan error, clients)
	)
	start := time.Now()
	for _, cs := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ds := make([]time.Duration, 0, calls)
			for range calls {
				t0 := time.Now()
				if err := call(cs); err != nil {
					errs <- err
					return
				}
				ds = append(ds, time.Since(t0))
			}
			mu.Lock()
			all = append(all, ds...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	select {
	case err := <-errs:
		return 0, 0, 0, fmt.Errorf("call through the HTTP gateway: %w", err)
	default:
	}
	return float64(len(all)) / elapsed.Seconds(), us(percentile(all, 50)), us(percentile(all, 99)), nil
}
