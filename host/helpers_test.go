package host_test

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/hosttest"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// stdio returns a user-scope server that runs test server ts.
func stdio(name, ts string, args ...string) config.ResolvedServer {
	cmd, a := testserver.Command(ts, args...)
	return resolved(name, config.Server{Type: config.TypeStdio, Command: cmd, Args: a})
}

func resolved(name string, def config.Server) config.ResolvedServer {
	return config.ResolvedServer{
		Name: name, Written: def, Effective: def,
		Scope: config.ScopeUser, Trust: config.TrustUser, Availability: config.Available,
	}
}

func cfgOf(servers ...config.ResolvedServer) *config.Resolved {
	return &config.Resolved{Servers: servers}
}

// sdkStdioEnv set to 1 runs the hosts of newHost with their stdio servers
// on the SDK's own transport instead of internal/jsonl
// (TestStdioTestsOnTheSDKTransport sets it).
const sdkStdioEnv = "SWITCHBOARD_TEST_SDK_STDIO"

// hungGrace is the CloseGrace of tests whose servers hang (in a call, in
// initialize, in a slow start) and so do not exit on stdin EOF: they are
// sent SIGTERM after it, instead of after newHost's half second.
const hungGrace = 100 * time.Millisecond

// timeOutThrice makes the three calls that open a circuit (the breaker's
// threshold), each of which must time out: the server hangs in the tool or
// is stopped. Each has a deadline 300 ms away (WithCallDeadline, as the
// gateway gives its calls), so the server's own timeout stays long for the
// calls that must succeed later, however loaded the machine. They run at
// once: the test waits out one deadline, not three in a row.
func timeOutThrice(t *testing.T, h *host.Host, tool string, args map[string]any) {
	t.Helper()
	ctx, cancel := host.WithCallDeadline(ctxFor(t, 10*time.Second), time.Now().Add(300*time.Millisecond))
	defer cancel()
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := h.Call(ctx, tool, args)
			errs <- err
		}()
	}
	for range 3 {
		if err := <-errs; !errors.Is(err, host.ErrTimeout) {
			t.Fatalf("%s: %v, want ErrTimeout", tool, err)
		}
	}
}

// newHost starts a host and closes it when the test ends.
func newHost(t *testing.T, cfg *config.Resolved, opts *host.Options) *host.Host {
	t.Helper()
	if opts == nil {
		opts = &host.Options{}
	}
	if opts.LookupEnv == nil {
		opts.LookupEnv = func(string) (string, bool) { return "", false }
	}
	if opts.CloseGrace == 0 {
		opts.CloseGrace = 500 * time.Millisecond
	}
	if os.Getenv(sdkStdioEnv) == "1" {
		opts.SDKStdioTransport = true
	}
	h := host.New(cfg, opts)
	t.Cleanup(func() { h.Close() })
	return h
}

// The helpers host's and oauth's tests share (internal/hosttest).
var (
	ctxFor    = hosttest.Ctx
	statusOf  = hosttest.Status
	waitState = hosttest.WaitState
	textOf    = hosttest.Text
)

func mustCall(t *testing.T, h *host.Host, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := h.Call(ctxFor(t, 20*time.Second), name, args)
	if err != nil {
		t.Fatalf("Call(%s): %v", name, err)
	}
	return res
}

func pidOf(t *testing.T, h *host.Host, server string) int {
	t.Helper()
	res := mustCall(t, h, "mcp__"+server+"__pid", map[string]any{})
	var pid int
	if _, err := fmt.Sscan(textOf(res), &pid); err != nil {
		t.Fatalf("pid tool answered %q", textOf(res))
	}
	return pid
}

func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// A zombie is dead for our purposes; field 3 is the state.
	if i := strings.LastIndexByte(string(data), ')'); i >= 0 && i+2 < len(data) {
		return data[i+2] != 'Z'
	}
	return true
}

func linuxOnly(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("process checks read /proc")
	}
}

func hasTool(list *host.ToolList, name string) bool {
	for _, tool := range list.Tools {
		if tool.Name == name {
			return true
		}
	}
	return false
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// waitFor polls cond every 10 ms until it holds, failing after within.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// headersSeen returns the HTTP headers the echo server of server saw on a
// call. The tool answers hex-encoded: the host keeps the secret header
// values it gave a server from results, which is what the callers check.
func headersSeen(t *testing.T, h *host.Host, server string) string {
	t.Helper()
	return unhex(t, textOf(mustCall(t, h, "mcp__"+server+"__headers", map[string]any{"hex": true})))
}

// unhex decodes what an echo tool answered with "hex": true.
func unhex(t *testing.T, s string) string {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("the tool answered %q, not hex", s)
	}
	return string(b)
}
