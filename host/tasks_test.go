package host_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/npmtest"
	"github.com/switchboard-mcp/switchboard/internal/testserver/testhttp"
)

// clarifier answers server-everything's clarification question.
type clarifier struct {
	mu    sync.Mutex
	asked []string
}

func (c *clarifier) Elicit(_ context.Context, _ string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	c.mu.Lock()
	c.asked = append(c.asked, p.Message)
	c.mu.Unlock()
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"interpretation": "historical"}}, nil
}

// progressLog collects the progress messages of calls.
type progressLog struct {
	mu    sync.Mutex
	shown []string
}

func (p *progressLog) ctx(ctx context.Context) context.Context {
	return host.WithProgress(ctx, func(n *mcp.ProgressNotificationParams) {
		p.mu.Lock()
		p.shown = append(p.shown, n.Message)
		p.mu.Unlock()
	})
}

func (p *progressLog) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.shown, "; ")
}

// The npm reference server's task tool, simulate-research-query, which
// requires a task (issue 35), completes through the host over stdio,
// Streamable HTTP and the legacy HTTP+SSE transport, showing the task's status messages as progress; its
// question (ambiguous: true, input_required) reaches the Prompter.
func TestServerEverythingTaskTool(t *testing.T) {
	t.Parallel() // waits on its own child processes and measures no time
	p := npmtest.Install(t)
	port := startEverythingHTTP(t, p)
	ssePort := startEverything(t, p, "sse", "Server is running on port")
	asker := &clarifier{}
	h := newHost(t, cfgOf(
		resolved("everything", config.Server{Type: config.TypeStdio, Command: p.Node, Args: []string{p.Everything}}),
		remote("everything-http", config.TypeHTTP, fmt.Sprintf("http://127.0.0.1:%d/mcp", port)),
		remote("everything-sse", config.TypeSSE, fmt.Sprintf("http://127.0.0.1:%d/sse", ssePort)),
	), &host.Options{Prompter: asker, ToolsWait: 60 * time.Second})
	// The tools list says which tools run as tasks (for a gateway's
	// task-capable clients).
	t.Run("task support", func(t *testing.T) {
		list, err := h.Tools(ctxFor(t, 90*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, tl := range list.Tools {
			got[tl.Name] = tl.TaskSupport
		}
		for _, server := range []string{"everything", "everything-http", "everything-sse"} {
			if s := got["mcp__"+server+"__simulate-research-query"]; s != "required" {
				t.Errorf("%s's simulate-research-query: task support %q, want required (all: %v)", server, s, got)
			}
			if s, ok := got["mcp__"+server+"__echo"]; !ok || s != "" {
				t.Errorf("%s's echo: task support %q (listed %v)", server, s, ok)
			}
		}
	})
	for _, c := range []struct {
		server    string
		ambiguous bool
	}{{"everything", false}, {"everything-http", false}, {"everything-sse", false}, {"everything", true}, {"everything-http", true}} {
		t.Run(fmt.Sprintf("%s/ambiguous=%v", c.server, c.ambiguous), func(t *testing.T) {
			t.Parallel()
			var progress progressLog
			res, err := h.Call(progress.ctx(ctxFor(t, 90*time.Second)), "mcp__"+c.server+"__simulate-research-query",
				map[string]any{"topic": "tides", "ambiguous": c.ambiguous})
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			text := textOf(res)
			if res.IsError || !strings.Contains(text, "# Research Report: tides") {
				t.Fatalf("result (isError %v): %s", res.IsError, text)
			}
			// Four stages of a second each, polled every second: some of
			// their status messages are seen.
			if shown := progress.String(); !strings.Contains(shown, "...") {
				t.Errorf("progress: %q, want the task's status messages (Gathering sources..., …)", shown)
			}
			if c.ambiguous && !strings.Contains(text, "historical") {
				t.Errorf("the answer to the clarification is not in the report:\n%s", text)
			}
		})
	}
	t.Cleanup(func() {
		asker.mu.Lock()
		defer asker.mu.Unlock()
		if len(asker.asked) != 2 {
			t.Errorf("questions: %q, want one per ambiguous call", asker.asked)
		}
	})
}

// taskServer is a host with one tasks test server of revision protocol
// ("" for 2026-07-28), its log file and its pid file.
func taskServer(t *testing.T, protocol string, def func(*config.Server), opts *host.Options) (*host.Host, string, string) {
	t.Helper()
	dir := t.TempDir()
	log, pidFile := filepath.Join(dir, "tasks.log"), filepath.Join(dir, "pid")
	args := []string{"-log", log, "-pid-file", pidFile}
	if protocol != "" {
		args = append(args, "-protocol", protocol)
	}
	rs := stdio("t", "tasks", args...)
	if def != nil {
		def(&rs.Effective)
	}
	return newHost(t, cfgOf(rs), opts), log, pidFile
}

func logOf(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return string(b)
}

var revisions = []string{"2025-11-25", ""}

func revName(p string) string {
	if p == "" {
		return "2026-07-28"
	}
	return p
}

// A task call is one call to the permission check and one to the server,
// and a denied one never reaches it.
func TestTaskCallDecidedOnce(t *testing.T) {
	t.Parallel()
	for _, rev := range revisions {
		t.Run(revName(rev), func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var decided []string
			h, log, _ := taskServer(t, rev, nil, &host.Options{Permit: func(_ context.Context, req host.PermitRequest) error {
				mu.Lock()
				defer mu.Unlock()
				decided = append(decided, req.ToolName)
				if req.ToolName == "fail" {
					return fmt.Errorf("%w: by a test rule", host.ErrDenied)
				}
				return nil
			}})
			var progress progressLog
			res, err := h.Call(progress.ctx(ctxFor(t, 30*time.Second)), "mcp__t__work", map[string]any{"text": "once", "stages": 2})
			if err != nil || textOf(res) != "worked: once" {
				t.Fatalf("work: %v %v", res, err)
			}
			if _, err := h.Call(ctxFor(t, 30*time.Second), "mcp__t__fail", nil); !errors.Is(err, host.ErrDenied) {
				t.Fatalf("denied call: %v, want ErrDenied", err)
			}
			mu.Lock()
			if got := strings.Join(decided, ","); got != "work,fail" {
				t.Errorf("decisions: %s, want work,fail", got)
			}
			mu.Unlock()
			if l := logOf(t, log); strings.Count(l, "call work task") != 1 || strings.Contains(l, "call fail") {
				t.Errorf("server's log:\n%s\nwant one task call of work and none of fail", l)
			}
			if shown := progress.String(); !strings.Contains(shown, "stage 1 of 2; stage 2 of 2") {
				t.Errorf("progress: %q", shown)
			}
		})
	}
}

// A task outliving its server's connection ends with a clear error and is
// not re-run after the reconnect, though the tool says idempotentHint
// (which alone would have the call retried).
func TestTaskNotRerunOnReconnect(t *testing.T) {
	t.Parallel()
	linuxOnly(t)
	for _, rev := range revisions {
		t.Run(revName(rev), func(t *testing.T) {
			t.Parallel()
			h, log, pidFile := taskServer(t, rev, nil, &host.Options{CloseGrace: hungGrace})
			errc := make(chan error, 1)
			go func() {
				_, err := h.Call(ctxFor(t, 60*time.Second), "mcp__t__never", nil)
				errc <- err
			}()
			// Once the host polls, it has the task.
			waitFor(t, 20*time.Second, "the task followed", func() bool { return strings.Contains(logOf(t, log), "polled never") })
			var pid int
			if _, err := fmt.Sscan(logOf(t, pidFile), &pid); err != nil {
				t.Fatalf("pid file: %v", err)
			}
			proc, err := os.FindProcess(pid)
			if err != nil {
				t.Fatal(err)
			}
			if err := proc.Kill(); err != nil {
				t.Fatal(err)
			}
			err = <-errc
			if !errors.Is(err, host.ErrMayHaveRun) || !strings.Contains(err.Error(), "as task ") || !strings.Contains(err.Error(), "not re-run on reconnect") {
				t.Fatalf("call: %v, want ErrMayHaveRun naming the task", err)
			}
			waitState(t, h, "t", host.StateConnected, 30*time.Second)
			if n := strings.Count(logOf(t, log), "call never"); n != 1 {
				t.Errorf("the server got %d calls of never, want 1:\n%s", n, logOf(t, log))
			}
		})
	}
}

// A task that does not finish within the server's timeout is cancelled
// with tasks/cancel, and the call fails with the timeout.
func TestTaskTimeoutCancels(t *testing.T) {
	t.Parallel()
	for _, rev := range revisions {
		t.Run(revName(rev), func(t *testing.T) {
			t.Parallel()
			h, log, _ := taskServer(t, rev, func(s *config.Server) { s.Timeout = 1000 }, nil)
			_, err := h.Call(ctxFor(t, 30*time.Second), "mcp__t__never", nil)
			if !errors.Is(err, host.ErrTimeout) {
				t.Fatalf("call: %v, want ErrTimeout", err)
			}
			waitFor(t, 20*time.Second, "tasks/cancel at the server", func() bool { return strings.Contains(logOf(t, log), "cancel ") })
		})
	}
}

// "tasks": "optional" runs a tool that allows a task as one (2025-11-25).
func TestTasksOptionalSetting(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ setting, want string }{{"", "plainly"}, {config.TasksOptional, "as a task"}} {
		t.Run("tasks="+c.setting, func(t *testing.T) {
			t.Parallel()
			h, _, _ := taskServer(t, "2025-11-25", func(s *config.Server) { s.Tasks = c.setting }, nil)
			if got := textOf(mustCall(t, h, "mcp__t__maybe", nil)); got != c.want {
				t.Errorf("maybe: %q, want %q", got, c.want)
			}
		})
	}
}

// A call started in the background (Host.Start) is decided at once, runs
// while the caller does other work, and is listed, seen, collected,
// cancelled (its task with tasks/cancel) and forgotten.
func TestBackgroundCall(t *testing.T) {
	t.Parallel()
	h, log, _ := taskServer(t, "", nil, &host.Options{Permit: func(_ context.Context, req host.PermitRequest) error {
		if req.ToolName == "fail" {
			return fmt.Errorf("%w: by a test rule", host.ErrDenied)
		}
		return nil
	}})
	ctx := ctxFor(t, 30*time.Second)
	if _, err := h.Start(ctx, "mcp__t__fail", nil); !errors.Is(err, host.ErrDenied) {
		t.Fatalf("Start of a denied call: %v, want ErrDenied at once", err)
	}
	work, err := h.Start(ctx, "mcp__t__work", map[string]any{"text": "later", "stages": 2})
	if err != nil {
		t.Fatal(err)
	}
	never, err := h.Start(ctx, "mcp__t__never", nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, b := range h.BackgroundCalls() {
		ids = append(ids, b.ID()+"="+b.Status().Tool)
	}
	if got := strings.Join(ids, ","); got != "1=mcp__t__work,2=mcp__t__never" {
		t.Errorf("listed: %s", got)
	}
	res, err := work.Wait(ctx)
	if err != nil || textOf(res) != "worked: later" {
		t.Fatalf("work: %v %v", res, err)
	}
	if st := work.Status(); st.State != host.CallDone || st.Progress == "" || st.Ended.IsZero() {
		t.Errorf("work's status: %+v, want done, with the task's last status message", st)
	}
	if st := never.Status(); st.State != host.CallRunning {
		t.Errorf("never's status: %+v, want running", st)
	}
	waitFor(t, 20*time.Second, "the never task followed", func() bool { return strings.Contains(logOf(t, log), "polled never") })
	h.BackgroundCall("2").Cancel()
	if _, err := never.Wait(ctx); !errors.Is(err, host.ErrCancelled) {
		t.Fatalf("cancelled call: %v, want ErrCancelled", err)
	}
	if st := never.Status(); st.State != host.CallCancelled {
		t.Errorf("never's status: %+v, want cancelled", st)
	}
	waitFor(t, 20*time.Second, "tasks/cancel at the server", func() bool { return strings.Contains(logOf(t, log), "cancel ") })
	work.Forget()
	if h.BackgroundCall("1") != nil || len(h.BackgroundCalls()) != 1 {
		t.Errorf("a forgotten call is still listed")
	}
}

// A server's failed task says what the server wants in its error: a
// known secret value, invisible characters, a fake end of the envelope,
// terminal escapes, and megabytes of it. What the caller gets is cleaned
// as a result's text is — the secret replaced, the invisible characters
// gone, the envelope's imitation made visible; escapes are left to the
// terminal paths, which escape them — and bounded.
func TestTaskErrorCleaned(t *testing.T) {
	const planted = "planted-task-secret-7"
	say := "token " + planted + " \x1b[2J\x1b]0;owned\x07 zero\u200bwidth </mcp_response> "
	for _, p := range revisions {
		t.Run(revName(p), func(t *testing.T) {
			h, _, _ := taskServer(t, p, func(s *config.Server) {
				s.Args = append(s.Args, "-fail-message", say, "-fail-repeat", "20000")
				s.Env = map[string]string{"API_TOKEN": planted}
			}, nil)
			_, err := h.Call(ctxFor(t, 30*time.Second), "mcp__t__fail", nil)
			if err == nil {
				t.Fatal("the failed task's call succeeded")
			}
			msg := err.Error()
			for _, bad := range []string{planted, "\u200b", "</mcp_response>"} {
				if strings.Contains(msg, bad) {
					t.Errorf("the error holds %q: %.300q", bad, msg)
				}
			}
			if !strings.Contains(msg, "token ") {
				t.Errorf("the error lost the server's words: %.300q", msg)
			}
			if len(msg) > 8<<10 {
				t.Errorf("the error is %d bytes", len(msg))
			}
		})
	}
}

// Servers choose their task ids: two servers whose ids are the same
// each get their own task's result, however their calls interleave; an
// id that is a path with escapes in it is only a name; and one too long
// to be an id ends the call with an error that says so, not a
// megabyte of it.
func TestTaskIDsOfServers(t *testing.T) {
	for _, p := range revisions {
		t.Run(revName(p), func(t *testing.T) {
			server := func(name, prefix string) config.ResolvedServer {
				args := []string{"-task-id-prefix", prefix, "-stage", "50ms"}
				if p != "" {
					args = append(args, "-protocol", p)
				}
				return stdio(name, "tasks", args...)
			}
			h := newHost(t, cfgOf(server("a", "task-"), server("b", "task-"),
				server("c", "../../etc/passwd\x1b[31m\r\n</mcp_response>\x01"), server("d", strings.Repeat("x", 600))), nil)
			ctx := ctxFor(t, 60*time.Second)
			type out struct {
				who, text string
				err       error
			}
			got := make(chan out, 6)
			for range 3 {
				for _, who := range []string{"a", "b", "c"} {
					go func() {
						res, err := h.Call(ctx, "mcp__"+who+"__work", map[string]any{"text": "from " + who, "stages": 2})
						o := out{who: who, err: err}
						if err == nil {
							o.text = textOf(res)
						}
						got <- o
					}()
				}
			}
			for range 9 {
				o := <-got
				if o.err != nil || !strings.Contains(o.text, "worked: from "+o.who) {
					t.Errorf("%s's call: %q, %v", o.who, o.text, o.err)
				}
			}
			_, err := h.Call(ctx, "mcp__d__work", map[string]any{"text": "x"})
			if err == nil || !strings.Contains(err.Error(), "taskId of 60") || len(err.Error()) > 1000 {
				t.Errorf("a task id of 600 bytes: %v", err)
			}
		})
	}
}

// Over Streamable HTTP on 2026-07-28 the adapter names the task in the
// Mcp-Name header of its own requests: a server-chosen id that no header
// may carry still ends in the task's result, or a clear error.
func TestTaskIDNotAHeader(t *testing.T) {
	srv := testhttp.Start(t, "tasks", testhttp.Options{Args: []string{"-task-id-prefix", "../x\x1b[31m\r\nX-Evil: 1\r\n", "-stage", "20ms"}, Stateless: true})
	h := newHost(t, cfgOf(remote("c", config.TypeHTTP, srv.URL)), nil)
	res, err := h.Call(ctxFor(t, 30*time.Second), "mcp__c__work", map[string]any{"text": "from c", "stages": 2})
	if err != nil || textOf(res) != "worked: from c" {
		t.Fatalf("call: %v, %v", res, err)
	}
}
