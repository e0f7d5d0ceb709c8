package proc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var modes = []struct {
	name      string
	supervise bool
}{{"plain", false}, {"supervised", true}}

func startSh(t *testing.T, supervise bool, script string) *Process {
	t.Helper()
	p, err := Start(Spec{
		Command:   "sh",
		Args:      []string{"-c", script},
		Env:       testEnv(),
		Supervise: supervise,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(0) })
	return p
}

// within fails the test as a hang if f does not return in d.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	ch := make(chan struct{})
	go func() { f(); close(ch) }()
	select {
	case <-ch:
	case <-time.After(d):
		t.Fatalf("%s: still blocked after %v; processes under the test: %v", what, d, descendantsAll(os.Getpid()))
	}
}

func exitSignal(err error) syscall.Signal {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws := ee.Sys().(syscall.WaitStatus); ws.Signaled() {
			return ws.Signal()
		}
	}
	var se *ExitError
	if errors.As(err, &se) {
		return se.Signal()
	}
	return 0
}

// waitStderr polls until the server's stderr has a line, and returns it.
// reportedProcess is the process whose pid the server p wrote to stderr,
// which must be running; it is killed when the test ends.
func reportedProcess(t *testing.T, p *Process, what string) procInfo {
	t.Helper()
	pid, err := strconv.Atoi(waitStderr(t, p))
	if err != nil {
		t.Fatal(err)
	}
	info, _, _, ok := readProc(pid)
	if !ok {
		t.Fatalf("%s %d is not running", what, pid)
	}
	t.Cleanup(func() { killAll([]procInfo{info}) })
	return info
}

func waitStderr(t *testing.T, p *Process) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if l := p.StderrTail(1); len(l) > 0 {
			return l[0]
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no stderr from the server")
	return ""
}

func TestCloseOrder(t *testing.T) {
	tests := []struct {
		name   string
		script string
		want   syscall.Signal // 0: exited by itself on stdin EOF
	}{
		{"exits on stdin EOF", "cat >/dev/null", 0},
		{"ignores EOF, exits on SIGTERM", "echo up >&2; exec sleep 1000", syscall.SIGTERM},
		{"ignores SIGTERM", "trap '' TERM; echo up >&2; sleep 1000", syscall.SIGKILL},
	}
	for _, m := range modes {
		for _, tt := range tests {
			t.Run(m.name+"/"+tt.name, func(t *testing.T) {
				p := startSh(t, m.supervise, tt.script)
				if tt.want != 0 {
					waitStderr(t, p) // the trap is set
				}
				within(t, 10*time.Second, "Close", func() {
					if err := p.Close(300 * time.Millisecond); err != nil {
						t.Error(err)
					}
				})
				select {
				case <-p.Done():
				default:
					t.Fatal("Done not closed after Close")
				}
				if got := exitSignal(p.ExitErr()); got != tt.want {
					t.Errorf("ended by signal %v (ExitErr %v), want %v", got, p.ExitErr(), tt.want)
				}
			})
		}
	}
}

// A grandchild outside the server's group keeps stdout and stderr open;
// Close must not wait for it. The supervisor reaps it, plain mode cannot.
func TestCloseEscapedGrandchild(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			p := startSh(t, m.supervise, "setsid sleep 1000 & echo $! >&2; exec sleep 1000")
			pid, err := strconv.Atoi(waitStderr(t, p))
			if err != nil {
				t.Fatal(err)
			}
			esc, _, _, _ := readProc(pid)
			defer killAll([]procInfo{esc})
			within(t, 10*time.Second, "Close", func() { p.Close(200 * time.Millisecond) })
			within(t, 5*time.Second, "reading stdout", func() { io.Copy(io.Discard, p.Stdout()) })
			wait := 5 * time.Second
			if !m.supervise {
				wait = 500 * time.Millisecond
			}
			left := waitGone([]procInfo{esc}, wait)
			switch {
			case m.supervise && len(left) > 0:
				t.Errorf("supervisor left the escaped grandchild %v running", left)
			case !m.supervise && len(left) == 0:
				t.Logf("escaped grandchild is gone even without the supervisor")
			case !m.supervise:
				t.Logf("without the supervisor the escaped grandchild survives Close: %v", left)
			}
		})
	}
}

func TestStderrFlood(t *testing.T) {
	const limit = 64 << 10
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			p, err := Start(Spec{
				Command:     "sh",
				Args:        []string{"-c", "yes 0123456789abcdef | head -c 50000000 >&2; printf '\\nthe-end\\n' >&2"},
				Env:         testEnv(),
				StderrLimit: limit,
				Supervise:   m.supervise,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(0)
			within(t, 60*time.Second, "flooding child", func() { <-p.Done() })
			if err := p.ExitErr(); err != nil {
				t.Fatal(err)
			}
			within(t, 5*time.Second, "stderr reader", func() { <-p.copyDone })
			if len(p.ring.buf) != limit {
				t.Errorf("ring holds %d bytes, want %d", len(p.ring.buf), limit)
			}
			if p.ring.total != 50000000+int64(len("\nthe-end\n")) {
				t.Errorf("read %d bytes of stderr, want all of them", p.ring.total)
			}
			tail := p.StderrTail(3)
			if len(tail) != 3 || tail[2] != "the-end" || !strings.HasPrefix("0123456789abcdef", tail[1]) {
				t.Errorf("StderrTail(3) = %q", tail)
			}
			if n := len(p.StderrTail(0)); n > limit/17+1 {
				t.Errorf("StderrTail(0) has %d lines, more than %d bytes can hold", n, limit)
			}
		})
	}
}

func countFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// settle polls f until it is <= want, returning the last value.
func settle(want int, f func() int) int {
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := f()
		if got <= want || time.Now().After(deadline) {
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestCyclesLeakNothing(t *testing.T) {
	cycle := func(supervise bool) {
		p := startSh(t, supervise, "exec cat")
		if _, err := io.WriteString(p.Stdin(), "ping\n"); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(p.Stdout()).ReadString('\n')
		if line != "ping\n" {
			t.Fatalf("echo = %q, %v", line, err)
		}
		if err := p.Close(time.Second); err != nil {
			t.Fatal(err)
		}
	}
	cycle(false) // starts the spawn thread, which lives on
	cycle(true)  // starts the shared supervisor, which lives on
	time.Sleep(2 * drainDelay)
	goroutines, fds := runtime.NumGoroutine(), countFDs(t)
	for i := range 100 {
		cycle(i%2 == 1)
	}
	if got := settle(goroutines, runtime.NumGoroutine); got > goroutines {
		t.Errorf("goroutines: %d before, %d after 100 cycles", goroutines, got)
	}
	if got := settle(fds, func() int { return countFDs(t) }); got > fds {
		t.Errorf("fds: %d before, %d after 100 cycles", fds, got)
	}
	if kids := descendants(os.Getpid()); len(kids) > 0 {
		t.Errorf("processes left: %v", kids)
	}
}

func TestKillMidUse(t *testing.T) {
	for _, m := range modes {
		for _, how := range []string{"external SIGKILL", "Kill"} {
			t.Run(m.name+"/"+how, func(t *testing.T) {
				p := startSh(t, m.supervise, "sleep 1000 & exec cat")
				out := bufio.NewReader(p.Stdout())
				io.WriteString(p.Stdin(), "ping\n")
				if line, err := out.ReadString('\n'); line != "ping\n" {
					t.Fatalf("echo = %q, %v", line, err)
				}
				if how == "Kill" {
					p.Kill()
					p.Kill() // idempotent
				} else {
					syscall.Kill(p.Pid(), syscall.SIGKILL)
				}
				within(t, 10*time.Second, "Done", func() { <-p.Done() })
				if kids := descendants(os.Getpid()); len(kids) > 0 {
					t.Errorf("processes left after Done: %v", kids)
				}
				if got := exitSignal(p.ExitErr()); got != syscall.SIGKILL {
					t.Errorf("ExitErr = %v, want death by SIGKILL", p.ExitErr())
				}
				within(t, 5*time.Second, "reading stdout", func() {
					if _, err := out.ReadString('\n'); err == nil {
						t.Error("read succeeded after kill")
					}
				})
				if err := p.Kill(); err != nil {
					t.Errorf("Kill after exit: %v", err)
				}
			})
		}
	}
}

func TestConcurrentClose(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			p := startSh(t, m.supervise, "exec sleep 1000")
			var wg sync.WaitGroup
			for range 8 {
				wg.Add(2)
				go func() { defer wg.Done(); p.Close(100 * time.Millisecond) }()
				go func() { defer wg.Done(); p.Kill() }()
			}
			within(t, 10*time.Second, "concurrent Close and Kill", wg.Wait)
			<-p.Done()
		})
	}
}

func TestStartErrors(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			for _, spec := range []Spec{
				{Command: "definitely-not-a-command-xyz"},
				{Command: "sh", Dir: "/nonexistent-dir-xyz"},
				{Command: "/etc/hostname"}, // not executable
				{},
			} {
				spec.Supervise = m.supervise
				if p, err := Start(spec); err == nil {
					p.Close(0)
					t.Errorf("Start(%+v) succeeded", spec)
				} else {
					t.Logf("Start(%q): %v", spec.Command, err)
				}
			}
		})
	}
}

func TestEnvNilIsEmpty(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			env, err := exec.LookPath("env")
			if err != nil {
				t.Skip(err)
			}
			p, err := Start(Spec{Command: env, Supervise: m.supervise})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(0)
			b, _ := io.ReadAll(p.Stdout())
			want := ""
			if m.supervise { // the supervisor's tag, and nothing else
				want = TagEnv + "=" + currentTagBase()
			}
			if got := string(b); want == "" && got != "" || want != "" && (!strings.HasPrefix(got, want) || strings.Count(got, "\n") != 1) {
				t.Errorf("environment with Env nil: %q, want %q", b, want)
			}
		})
	}
}

// descendantsAll lists every descendant of root with its state, zombies too.
func descendantsAll(root int) []string {
	kids := map[int][]int{}
	desc := map[int]string{}
	for _, pid := range allPids() {
		if pi, state, ppid, ok := readProc(pid); ok {
			kids[ppid] = append(kids[ppid], pid)
			desc[pid] = fmt.Sprintf("%v:%c<-%d", pi, state, ppid)
		}
	}
	var out []string
	for queue := kids[root]; len(queue) > 0; queue = queue[1:] {
		out = append(out, desc[queue[0]])
		queue = append(queue, kids[queue[0]]...)
	}
	return out
}

func TestSupervisorFallback(t *testing.T) {
	for _, tt := range []struct {
		name  string
		setup func() func()
	}{
		{"SupervisorCommand nil", func() func() {
			old := SupervisorCommand
			SupervisorCommand = nil
			return func() { SupervisorCommand = old }
		}},
		{"MaybeRunSupervisor never called", func() func() {
			hooked.Store(false)
			return func() { hooked.Store(true) }
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			restore := tt.setup()
			p := startSh(t, true, "exec cat")
			restore()
			if p.supervised {
				t.Fatal("started under a supervisor")
			}
			if p.Pid() != p.cmd.Process.Pid {
				t.Errorf("Pid = %d, want the direct child %d", p.Pid(), p.cmd.Process.Pid)
			}
			within(t, 10*time.Second, "Close", func() { p.Close(time.Second) })
			if err := p.ExitErr(); err != nil {
				t.Errorf("cat on stdin EOF: %v", err)
			}
		})
	}
}

func TestResolveCommandOutsideWindows(t *testing.T) {
	cmd, args := ResolveCommand("npx", []string{"-y", "pkg"})
	if cmd != "npx" || len(args) != 2 {
		t.Errorf("ResolveCommand = %q %q, want it unchanged", cmd, args)
	}
}

// BenchmarkStartClose measures a server's spawn, one echo and Close; the
// supervised case adds the supervisor's own start (this test binary).
func BenchmarkStartClose(b *testing.B) {
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			for b.Loop() {
				p, err := Start(Spec{Command: "cat", Env: testEnv(), Supervise: m.supervise})
				if err != nil {
					b.Fatal(err)
				}
				io.WriteString(p.Stdin(), "x\n")
				bufio.NewReader(p.Stdout()).ReadString('\n')
				p.Close(time.Second)
			}
		})
	}
}
