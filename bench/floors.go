package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/jsonl"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// The floors: programs made of nothing but the official Go SDK, measured
// exactly like the switchboard programs they stand next to, so that a table
// can say how much of a gap is ours and how much the SDK's or the servers'.
//
//   - sdkRelayArg: a relay (latency scenario). An mcp.Server on the SDK's
//     StdioTransport re-serves the tools an upstream ClientSession (over
//     CommandTransport) lists; each call is forwarded with CallTool and its
//     result returned as is: no policy, no naming, no envelope, no
//     supervisor. With the "jsonl" variant both halves speak over
//     internal/jsonl instead, the stdio transport switchboard uses on both
//     sides: the same relay with switchboard's transport and nothing else of
//     it.
//   - sdkFanoutArg: a fan-out (fanout and peers scenarios). It starts every
//     server of an mcpServers file at once with CommandTransport, connects,
//     lists each one's tools, closes them all and exits: no configuration
//     loading, no policy, no supervisor.
const (
	sdkRelayArg  = "__bench-sdk-relay"  // then "sdk" or "jsonl", the server's command and args
	sdkFanoutArg = "__bench-sdk-fanout" // then an mcpServers JSON file
)

// maybeRunFloor runs one floor program and exits when this process was
// started as one; otherwise it returns at once.
func maybeRunFloor() {
	if len(os.Args) < 3 {
		return
	}
	var err error
	switch os.Args[1] {
	case sdkRelayArg:
		if len(os.Args) < 4 {
			err = errors.New("usage: " + sdkRelayArg + " sdk|jsonl command [args…]")
			break
		}
		err = runSDKRelay(os.Args[2], os.Args[3], os.Args[4:])
	case sdkFanoutArg:
		err = runSDKFanout(os.Args[2])
	case sdkProxyArg:
		if len(os.Args) != 5 {
			err = errProxyUsage
			break
		}
		err = runSDKProxy(os.Args[2], os.Args[3], os.Args[4])
	case httpEchoArg:
		err = runHTTPEcho(os.Args[2], func() *mcp.Server { return testserver.NewServer("echo") })
	default:
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench floor:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// floorClient is a Go SDK client as the bare bench client and the host
// make them: empty capabilities (no roots).
func floorClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "bench-floor", Version: "v0"},
		&mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
}

// runSDKRelay serves, on stdin/stdout, the tools of the server it runs,
// over the SDK's own stdio transports (variant "sdk") or over
// internal/jsonl's (variant "jsonl").
//
// It takes serve --stdio's runtime settings (one P, GOGC=200; a GOMAXPROCS
// or GOGC in the environment wins), which any Go program can set, so that
// the difference between the relays is code, not settings.
func runSDKRelay(variant, command string, args []string) error {
	if variant != "sdk" && variant != "jsonl" {
		return fmt.Errorf("unknown relay variant %q (sdk or jsonl)", variant)
	}
	if _, set := os.LookupEnv("GOMAXPROCS"); !set {
		runtime.GOMAXPROCS(1)
	}
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(200)
	}
	ctx := context.Background()
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	upstream, wait, err := floorUpstream(variant, exec.Command(command, args...))
	if err != nil {
		return err
	}
	defer wait()
	cs, err := floorClient().Connect(cctx, upstream, nil)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", command, err)
	}
	defer cs.Close()
	srv := mcp.NewServer(&mcp.Implementation{Name: "bench-sdk-relay", Version: "v0"}, nil)
	n := 0
	for tool, err := range cs.Tools(cctx, nil) {
		if err != nil {
			return fmt.Errorf("tools/list: %w", err)
		}
		if err := addForwarded(srv, cs, tool, tool.Name); err != nil {
			fmt.Fprintln(os.Stderr, "bench floor: skipping tool:", err)
			continue
		}
		n++
	}
	if n == 0 {
		return errors.New("the server lists no tool the SDK will serve")
	}
	var downstream mcp.Transport = &mcp.StdioTransport{}
	if variant == "jsonl" {
		// As serve --stdio reads its client.
		stdin, restore := jsonl.Stdin()
		defer restore()
		downstream = jsonl.New(stdin, nopWriteCloser{os.Stdout}, jsonl.Options{})
	}
	err = srv.Run(ctx, downstream)
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// floorUpstream is a floor's transport to the server cmd runs: the SDK's
// CommandTransport (variant "sdk"), or internal/jsonl on cmd's pipes
// ("jsonl", cmd started here). wait reaps a jsonl server once its session
// is closed, which ends its stdin (CommandTransport reaps its own).
func floorUpstream(variant string, cmd *exec.Cmd) (t mcp.Transport, wait func(), err error) {
	if variant == "sdk" {
		return &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, func() {}, nil
	}
	w, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	r, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	return jsonl.New(r, w, jsonl.Options{}), func() { _ = waitBounded(cmd, 5*time.Second) }, nil
}

// addForwarded serves tool, whose name upstream is upstream, forwarding
// each call to cs and returning its result as is (with cs nil, a call
// fails: something else must answer it). Server.AddTool panics on a schema
// it will not serve; that becomes an error.
func addForwarded(srv *mcp.Server, cs *mcp.ClientSession, tool *mcp.Tool, upstream string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: %v", tool.Name, r)
		}
	}()
	srv.AddTool(tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if cs == nil {
			return nil, errors.New("no middleware answered the call of " + tool.Name)
		}
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: upstream, Arguments: req.Params.Arguments})
	})
	return nil
}

// fanoutResult is the one line runSDKFanout prints.
type fanoutResult struct {
	Connected int `json:"connected"`
	Tools     int `json:"tools"`
}

// readServers reads the mcpServers of a bench-written file: at least one.
func readServers(file string) (map[string]stdioServer, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var cfg struct {
		Servers map[string]stdioServer `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(cfg.Servers) == 0 {
		return nil, fmt.Errorf("%s: no mcpServers", file)
	}
	return cfg.Servers, nil
}

// runSDKFanout connects to every server of file at once, lists their tools,
// closes them all and prints a fanoutResult. Any server that fails makes it
// fail, naming the server.
func runSDKFanout(file string) error {
	servers, err := readServers(file)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var (
		mu       sync.Mutex
		sessions []*mcp.ClientSession
		tools    int
		ok       int
		failures []string
		wg       sync.WaitGroup
	)
	for name, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs, err := floorClient().Connect(ctx, &mcp.CommandTransport{
				Command: exec.Command(s.Command, s.Args...), TerminateDuration: 5 * time.Second,
			}, nil)
			var res *mcp.ListToolsResult
			if err == nil {
				res, err = cs.ListTools(ctx, nil)
			}
			mu.Lock()
			defer mu.Unlock()
			if cs != nil {
				sessions = append(sessions, cs)
			}
			if err != nil {
				failures = append(failures, fmt.Sprintf("%s: %v", name, err))
				return
			}
			ok++
			tools += len(res.Tools)
		}()
	}
	wg.Wait()
	for _, cs := range sessions {
		wg.Add(1)
		go func() { defer wg.Done(); cs.Close() }()
	}
	wg.Wait()
	if len(failures) > 0 {
		sort.Strings(failures)
		return fmt.Errorf("%d of %d servers failed:\n%s", len(failures), len(servers), strings.Join(failures, "\n"))
	}
	return json.NewEncoder(os.Stdout).Encode(fanoutResult{Connected: ok, Tools: tools})
}

// sdkRelayCommand is the SDK-only relay (variant "sdk" or "jsonl") in
// front of target t, as a command line for a client.
func (b *bench) sdkRelayCommand(variant string, t target) (string, []string) {
	return b.self, append([]string{sdkRelayArg, variant, t.command}, t.args...)
}

// sdkFanout runs the SDK-only fan-out on servers, measured as status is,
// and returns the run and how many servers it connected.
func (b *bench) sdkFanout(cfg map[string]stdioServer) (measured, int, error) {
	m, err := b.runOn(cfg, "sdk-fanout", "SDK-only fan-out", func(file string) (string, []string) {
		return b.self, []string{sdkFanoutArg, file}
	})
	if err != nil {
		return m, 0, err
	}
	var res fanoutResult
	if err := json.Unmarshal(m.out, &res); err != nil {
		return m, 0, fmt.Errorf("SDK-only fan-out printed %q: %v", lastLines(string(m.out), 3), err)
	}
	return m, res.Connected, nil
}
