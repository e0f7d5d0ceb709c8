package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
)

// clientArg makes this program run one measuring client (maybeRunClient)
// instead of the bench: every client is a child process, so that each
// one's RSS is its own and the clients cannot disturb one another.
const clientArg = "__bench-client"

// clientSpec tells a client what to drive. bench/tsclient.cjs reads the
// same JSON.
type clientSpec struct {
	Kind      string         `json:"kind"` // bare | host | ts
	Mode      string         `json:"mode"` // latency | cold
	N         int            `json:"n"`
	Warmup    int            `json:"warmup"`
	Command   string         `json:"command"`
	Args      []string       `json:"args"`
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments"`
	SDKRoot   string         `json:"sdk_root,omitempty"`
	// Protocol, when set, is the protocol version the bare client asks
	// for (ClientSessionOptions.ProtocolVersion); empty is the SDK's newest.
	Protocol string `json:"protocol,omitempty"`
}

// clientResult is the one line a latency client prints.
type clientResult struct {
	InitMs float64 `json:"init_ms"`
	P50    float64 `json:"p50_us"`
	P99    float64 `json:"p99_us"`
	Calls  int     `json:"calls"`
	// Protocol is the version the session negotiated (bare client only).
	Protocol string `json:"protocol,omitempty"`
}

func maybeRunClient() {
	if len(os.Args) < 3 || os.Args[1] != clientArg {
		return
	}
	var spec clientSpec
	if err := json.Unmarshal([]byte(os.Args[2]), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "bench client:", err)
		os.Exit(2)
	}
	if err := runGoClient(spec); err != nil {
		fmt.Fprintln(os.Stderr, "bench client:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// runGoClient is the bare Go SDK client or the host, driving one server.
func runGoClient(spec clientSpec) error {
	ctx := context.Background()
	start := time.Now()
	var call func() error
	var closeFn func()
	var protocol string
	switch spec.Kind {
	case "bare":
		client := mcp.NewClient(&mcp.Implementation{Name: "bench-bare", Version: "v0"},
			&mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		cs, err := client.Connect(cctx, &mcp.CommandTransport{
			Command: exec.Command(spec.Command, spec.Args...), TerminateDuration: 2 * time.Second,
		}, &mcp.ClientSessionOptions{ProtocolVersion: spec.Protocol})
		if err != nil {
			return fmt.Errorf("connect: %w", err)
		}
		if ir := cs.InitializeResult(); ir != nil {
			protocol = ir.ProtocolVersion
		}
		closeFn = func() { cs.Close() }
		params := &mcp.CallToolParams{Name: spec.Tool, Arguments: spec.Arguments}
		call = func() error {
			res, err := cs.CallTool(ctx, params)
			if err == nil && res.IsError {
				err = errors.New("tool returned isError")
			}
			return err
		}
	case "host":
		def := config.Server{Type: config.TypeStdio, Command: spec.Command, Args: spec.Args}
		h := host.New(&config.Resolved{Servers: []config.ResolvedServer{{
			Name: "srv", Written: def, Effective: def,
			Scope: config.ScopeUser, Trust: config.TrustUser, Availability: config.Available,
		}}}, nil)
		closeFn = func() { h.Close() }
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		h.WaitReady(wctx)
		name := "mcp__srv__" + spec.Tool
		call = func() error {
			res, err := h.Call(ctx, name, spec.Arguments)
			if err == nil && res.IsError {
				err = errors.New("tool returned isError")
			}
			return err
		}
	default:
		return fmt.Errorf("unknown client kind %q", spec.Kind)
	}
	defer closeFn()
	initDur := time.Since(start)

	if spec.Mode == "cold" {
		return call()
	}
	for range spec.Warmup {
		if err := call(); err != nil {
			return err
		}
	}
	ds := make([]time.Duration, spec.N)
	for i := range ds {
		t0 := time.Now()
		if err := call(); err != nil {
			return err
		}
		ds[i] = time.Since(t0)
	}
	res := clientResult{InitMs: ms(initDur), P50: us(percentile(ds, 50)), P99: us(percentile(ds, 99)), Calls: spec.N, Protocol: protocol}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		return err
	}
	// Hold the session until the bench has read our RSS.
	_, _ = bufio.NewReader(os.Stdin).ReadString(0)
	return nil
}

// clientCmd returns the command that runs a client of spec.Kind.
func (b *bench) clientCmd(spec clientSpec, node string) (*exec.Cmd, error) {
	data, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	if spec.Kind == "ts" {
		return exec.Command(node, filepath.Join(b.root, "bench", "tsclient.cjs"), string(data)), nil
	}
	return exec.Command(b.self, clientArg, string(data)), nil
}

// latencyRun runs one latency client and returns its figures and its RSS
// (KiB, read from /proc while its session is still open; 0 if unknown).
func (b *bench) latencyRun(spec clientSpec, node, home string) (clientResult, int64, error) {
	cmd, err := b.clientCmd(spec, node)
	if err != nil {
		return clientResult{}, 0, err
	}
	if home != "" {
		// A switchboard under the client reads no real user configuration.
		cmd.Env = append(os.Environ(), "HOME="+home)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return clientResult{}, 0, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return clientResult{}, 0, err
	}
	if err := cmd.Start(); err != nil {
		return clientResult{}, 0, err
	}
	// The bound only keeps a broken client from hanging the bench.
	t := time.AfterFunc(10*time.Minute, func() { cmd.Process.Kill() })
	defer t.Stop()
	fail := func(err error) (clientResult, int64, error) {
		stdin.Close()
		_ = waitBounded(cmd, 5*time.Second)
		return clientResult{}, 0, fmt.Errorf("%s client: %v\n%s", spec.Kind, err, lastLines(stderr.String(), 5))
	}
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err != nil {
		return fail(fmt.Errorf("no result: %v", err))
	}
	var res clientResult
	if err := json.Unmarshal(line, &res); err != nil {
		return fail(fmt.Errorf("bad result %q: %v", line, err))
	}
	rss := vmRSS(cmd.Process.Pid)
	stdin.Close()
	if err := waitBounded(cmd, 15*time.Second); err != nil {
		return clientResult{}, 0, fmt.Errorf("%s client: %v\n%s", spec.Kind, err, lastLines(stderr.String(), 5))
	}
	return res, rss, nil
}

// waitBounded waits for cmd, killing it if it takes longer than d.
func waitBounded(cmd *exec.Cmd, d time.Duration) error {
	t := time.AfterFunc(d, func() { cmd.Process.Kill() })
	defer t.Stop()
	return cmd.Wait()
}

func lastLines(s string, n int) string {
	lines := bytes.Split(bytes.TrimSpace([]byte(s)), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
