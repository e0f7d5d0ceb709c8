package main

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/npmtest"
)

// firstList: how soon `switchboard serve` answers a client's first
// tools/list while one of its servers takes 20 s to start (issue 29,
// point 5), over stdio and HTTP, and whether Claude Code — which gives
// up on a tools/list after 5 s — sees the gateway connected with its
// tools (`claude mcp list`, once a round).
func (b *bench) firstList() error {
	sb, err := b.switchboard()
	if err != nil {
		return err
	}
	p, err := npmtest.Ensure(func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) })
	if err != nil {
		return err
	}
	self, args := b.echoCommand()
	slow := stdioServer{Type: "stdio", Command: "/bin/sh",
		Args: []string{"-c", fmt.Sprintf("sleep %d; exec '%s' %s", int(b.slowStart.Seconds()), self, strings.Join(args, " "))}}
	cfg := merge(servers("echo", 3, b.sbServer("echo")),
		map[string]stdioServer{
			"everything": {Type: "stdio", Command: p.Node, Args: []string{p.Everything}},
			"slow":       slow,
		})
	cfgFile := filepath.Join(b.tmp, "firstlist-mcp.json")
	if err := writeJSON(cfgFile, map[string]any{"mcpServers": cfg}); err != nil {
		return err
	}
	home, work, err := b.sandbox("firstlist")
	if err != nil {
		return err
	}
	serveArgs := []string{"--mcp-config", cfgFile, "--strict-mcp-config", "serve", "--no-watch"}
	type run struct {
		first    time.Duration // the first tools/list, request to answer
		servers  int           // servers with tools in it
		slowSeen time.Duration // serve's start to the list_changed that brings slow (round 1)
	}
	measure := func(transport string, round int) (run, error) {
		var r run
		ctx, cancel := context.WithTimeout(context.Background(), b.slowStart+60*time.Second)
		defer cancel()
		changed := make(chan struct{}, 1)
		client := mcp.NewClient(&mcp.Implementation{Name: "bench-firstlist", Version: "1"}, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
				select {
				case changed <- struct{}{}:
				default:
				}
			},
		})
		start := time.Now()
		var t mcp.Transport
		if transport == "stdio" {
			cmd := exec.Command(sb, append(serveArgs, "--stdio")...)
			cmd.Env, cmd.Dir = env(home), work
			t = &mcp.CommandTransport{Command: cmd}
		} else {
			cmd := exec.Command(sb, append(serveArgs, "--http", "127.0.0.1:0")...)
			cmd.Env, cmd.Dir = env(home), work
			url, stop, err := startServe(cmd)
			if err != nil {
				return r, err
			}
			defer stop()
			t = &mcp.StreamableClientTransport{Endpoint: url}
		}
		cs, err := client.Connect(ctx, t, nil)
		if err != nil {
			return r, err
		}
		defer cs.Close()
		list := func() (map[string]bool, error) {
			seen := map[string]bool{}
			for tool, err := range cs.Tools(ctx, nil) {
				if err != nil {
					return nil, err
				}
				server, _, _ := strings.Cut(tool.Name, "__")
				seen[server] = true
			}
			return seen, nil
		}
		t0 := time.Now()
		seen, err := list()
		r.first = time.Since(t0)
		if err != nil {
			return r, err
		}
		r.servers = len(seen)
		r.slowSeen = -1
		if round > 0 {
			return r, nil
		}
		for !seen["slow"] {
			select {
			case <-changed:
			case <-ctx.Done():
				return r, fmt.Errorf("%s: no list_changed brought the slow server's tools", transport)
			}
			if seen, err = list(); err != nil {
				return r, err
			}
		}
		r.slowSeen = time.Since(start)
		return r, nil
	}

	// Claude Code, with the gateway as its one server.
	claude := p.Claude
	ccHome, ccWork, err := b.sandbox("firstlist-claude")
	if err != nil {
		return err
	}
	entry := stdioServer{Type: "stdio", Command: sb, Args: append(append([]string{}, serveArgs...), "--stdio")}
	if err := writeJSON(filepath.Join(ccHome, ".claude.json"), map[string]any{"mcpServers": map[string]stdioServer{"switchboard": entry}}); err != nil {
		return err
	}
	var (
		firsts   = map[string][]float64{}
		servers  = map[string][]float64{}
		slowSeen = map[string]time.Duration{}
		ccOK     int
		ccLines  []string
		ccWall   []float64
	)
	for round := range b.rounds {
		for _, tr := range []string{"stdio", "http"} {
			r, err := measure(tr, round)
			if err != nil {
				return err
			}
			firsts[tr] = append(firsts[tr], ms(r.first))
			servers[tr] = append(servers[tr], float64(r.servers))
			if r.slowSeen >= 0 {
				slowSeen[tr] = r.slowSeen
			}
		}
		cmd := exec.Command(claude, "mcp", "list")
		cmd.Env = env(ccHome, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "NO_COLOR=1")
		cmd.Dir = ccWork
		start := time.Now()
		out, err := cmd.CombinedOutput()
		ccWall = append(ccWall, ms(time.Since(start)))
		line := ""
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, "switchboard:") {
				line = l[strings.LastIndex(l, " - ")+3:]
			}
		}
		if err == nil && strings.Contains(line, "Connected") && !strings.Contains(line, "failed") {
			ccOK++
		}
		ccLines = append(ccLines, strings.TrimSpace(line))
	}
	tb := &table{
		title: fmt.Sprintf("First tools/list with one server that takes %v to start (medians of %d rounds)", b.slowStart, b.rounds),
		head:  []string{"client", "first tools/list ms", "servers in it (of 5)", "slow server's tools arrive (list_changed), s after launch"},
	}
	for _, tr := range []string{"stdio", "http"} {
		tb.add("Go SDK client, serve --"+tr, median(firsts[tr]), median(servers[tr]), secondsOr(slowSeen[tr]))
	}
	tb.add(fmt.Sprintf("claude mcp list: %d of %d runs ✔ Connected", ccOK, b.rounds), "—", "—", fmt.Sprintf("wall %.1f s", median(ccWall)/1000))
	tb.note("Servers: 3 Go echo servers, server-everything (node) and slow: `sh -c 'sleep %d; exec <Go echo>'`. serve runs with --mcp-config --strict-mcp-config --no-watch and its default --wait. The first list is timed from the request (the client connects first); the slow server's arrival from launch, in round 1.",
		int(b.slowStart.Seconds()))
	tb.note("Claude Code %s lists the gateway as its one server (user scope, temp HOME); it gives up on a tools/list after 5 s (\"! Connected · tools fetch failed\"). Its lines: %s.", b.claudeVer, strings.Join(uniqCounts(ccLines), "; "))
	tb.print()
	return nil
}

func secondsOr(d time.Duration) any {
	if d <= 0 {
		return math.NaN()
	}
	return d.Seconds()
}

// uniqCounts returns each distinct string of ss with how often it occurs.
func uniqCounts(ss []string) []string {
	n := map[string]int{}
	var order []string
	for _, s := range ss {
		if n[s] == 0 {
			order = append(order, s)
		}
		n[s]++
	}
	var out []string
	for _, s := range order {
		out = append(out, fmt.Sprintf("%q ×%d", s, n[s]))
	}
	return out
}

var servingLine = regexp.MustCompile(`gateway serving (http://\S+/mcp)`)

// startServe starts a `serve --http` and returns its /mcp URL once it
// listens, and how to stop it.
func startServe(cmd *exec.Cmd) (string, func(), error) {
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
		}
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case url := <-found:
		return url, stop, nil
	case <-time.After(30 * time.Second):
		stop()
		return "", nil, fmt.Errorf("serve --http did not listen within 30 s")
	}
}
