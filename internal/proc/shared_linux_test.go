package proc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// supervisorPid is the pid of the host's shared supervisor, or 0 when none
// runs: what tells the supervisor from a leftover.
func supervisorPid() int {
	supMu.Lock()
	defer supMu.Unlock()
	if shared == nil {
		return 0
	}
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.dead != nil {
		return 0
	}
	return shared.cmd.Process.Pid
}

// currentTagBase is the tag base of the host's supervisor ("" if none).
func currentTagBase() string {
	supMu.Lock()
	defer supMu.Unlock()
	if shared == nil {
		return ""
	}
	return shared.tagBase
}

// deadTagBases are the tag bases of supervisors a test killed: their tags
// must not outlive them.
var deadTagBases map[string]bool

// supervisorsOf lists the children of pid that run as a supervisor.
func supervisorsOf(pid int) []int {
	var out []int
	for _, k := range allPids() {
		_, state, ppid, ok := readProc(k)
		if !ok || ppid != pid || state == 'Z' {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(k) + "/cmdline")
		if strings.Contains(string(cmdline), "\x00"+SupervisorArg+"\x00") {
			out = append(out, k)
		}
	}
	return out
}

// Twenty servers started at once share one supervisor, their parent.
func TestOneSupervisorForAll(t *testing.T) {
	ps := make([]*Process, 20)
	var wg sync.WaitGroup
	for i := range ps {
		wg.Go(func() { ps[i] = startSh(t, true, "exec cat") })
	}
	wg.Wait()
	sup := supervisorPid()
	if got := supervisorsOf(os.Getpid()); len(got) != 1 || got[0] != sup {
		t.Fatalf("supervisor processes %v, want exactly the one supervisorPid names (%d)", got, sup)
	}
	for _, p := range ps {
		if _, _, ppid, ok := readProc(p.Pid()); !ok || ppid != sup {
			t.Errorf("server %d: parent %d, want the supervisor %d", p.Pid(), ppid, sup)
		}
	}
	for _, p := range ps {
		wg.Go(func() {
			if err := p.Close(time.Second); err != nil {
				t.Error(err)
			}
		})
	}
	within(t, 10*time.Second, "closing 20 servers", wg.Wait)
	if kids := descendants(os.Getpid()); len(kids) > 0 {
		t.Errorf("processes left: %v", kids)
	}
}

// orphanOf starts a server that leaves an orphan at once: the subshell that
// started it exits, so it is reparented to the supervisor. prefix runs the
// orphan (env -u clears the tag). It returns the server and the orphan,
// once the orphan is the supervisor's child and runs sleep (until the forked
// shell has exec'd, its environ still holds the tag prefix was to clear).
func orphanOf(t *testing.T, prefix string) (*Process, procInfo) {
	t.Helper()
	p := startSh(t, true, "("+prefix+"setsid sleep 1000 & echo $! >&2); exec sleep 1000")
	orphan := reportedProcess(t, p, "orphan")
	pid := orphan.pid
	deadline := time.Now().Add(5 * time.Second)
	for {
		if now, _, ppid, _ := readProc(pid); ppid == supervisorPid() && now.comm == "sleep" {
			orphan.comm = now.comm
			return p, orphan
		}
		if time.Now().After(deadline) {
			t.Fatalf("orphan %v never became the supervisor's child running sleep", orphan)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// An orphan escaped from its server's group and its tree dies with its own
// server, not with another: the supervisor knows whose it is by its tag.
func TestOrphanDiesWithItsServer(t *testing.T) {
	a, orphanA := orphanOf(t, "")
	b, orphanB := orphanOf(t, "")
	within(t, 10*time.Second, "closing a", func() { a.Close(200 * time.Millisecond) })
	if left := waitGone([]procInfo{orphanA}, 0); len(left) > 0 {
		t.Errorf("a's orphan %v outlived a's Done", left)
	}
	if !alive(orphanB) {
		t.Fatalf("b's orphan %v died with a", orphanB)
	}
	select {
	case <-b.Done():
		t.Fatalf("b died with a: %v", b.ExitErr())
	default:
	}
	within(t, 10*time.Second, "closing b", func() { b.Close(200 * time.Millisecond) })
	if left := waitGone([]procInfo{orphanB}, 0); len(left) > 0 {
		t.Errorf("b's orphan %v outlived b's Done", left)
	}
}

// An orphan that cleared its tag cannot be told from a live server's, so it
// is left while any server lives, and killed once none does.
func TestUntaggedOrphanDiesWithTheLastServer(t *testing.T) {
	a, orphan := orphanOf(t, "env -u "+TagEnv+" ")
	if tag, _ := processTag(orphan.pid); tag != "" {
		t.Fatalf("orphan still carries tag %q", tag)
	}
	other := startSh(t, true, "exec cat")
	within(t, 10*time.Second, "closing a", func() { a.Close(200 * time.Millisecond) })
	time.Sleep(leftoverGrace + 200*time.Millisecond)
	if !alive(orphan) {
		t.Fatalf("untagged orphan %v was killed while another server may own it", orphan)
	}
	within(t, 10*time.Second, "closing the other", func() { other.Close(time.Second) })
	if left := waitGone([]procInfo{orphan}, 5*time.Second); len(left) > 0 {
		t.Errorf("untagged orphan %v survived the last server", left)
	}
}

// If the supervisor dies, its servers die with it and say so; the next
// Start brings a new supervisor.
func TestSupervisorKilled(t *testing.T) {
	p1 := startSh(t, true, "exec cat")
	p2 := startSh(t, true, "sleep 1000 & exec cat")
	old := supervisorPid()
	tree := descendants(old)
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*Process{p1, p2} {
		within(t, 10*time.Second, "Done", func() { <-p.Done() })
		if err := p.ExitErr(); !errors.Is(err, errSupervisorGone) {
			t.Errorf("ExitErr = %v, want %v", err, errSupervisorGone)
		}
	}
	if left := waitGone(tree, 5*time.Second); len(left) > 0 {
		t.Errorf("survived the supervisor: %v", left)
	}
	checkNewSupervisor(t, old)
}

// checkNewSupervisor starts a server after supervisor old is gone: it runs
// under a new one and closes cleanly.
func checkNewSupervisor(t *testing.T, old int) {
	t.Helper()
	p := startSh(t, true, "exec cat")
	if now := supervisorPid(); now == old || now == 0 {
		t.Errorf("supervisor %d after the old one (%d) was gone", now, old)
	}
	within(t, 10*time.Second, "Close", func() { p.Close(time.Second) })
	if err := p.ExitErr(); err != nil {
		t.Errorf("cat on stdin EOF: %v", err)
	}
}

// A supervisor that cannot run fails Start with what it said.
func TestSupervisorBroken(t *testing.T) {
	if sup := supervisorPid(); sup != 0 {
		syscall.Kill(sup, syscall.SIGKILL)
		deadline := time.Now().Add(10 * time.Second)
		for supervisorPid() != 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	old := SupervisorCommand
	defer func() { SupervisorCommand = old }()
	SupervisorCommand = func() (string, []string, bool) {
		return "/bin/sh", []string{"-c", "echo cannot supervise >&2; exit 3", "sh"}, true
	}
	p, err := Start(Spec{Command: "cat", Env: testEnv(), Supervise: true})
	if err == nil {
		p.Close(0)
		t.Fatal("Start succeeded under a broken supervisor")
	}
	for _, want := range []string{"cannot supervise", "exit status 3"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	SupervisorCommand = old
	startSh(t, true, "exec cat").Close(time.Second)
}

// With no Dir a server runs in the host's working directory, as a direct
// start would, not in the supervisor's ("/").
func TestEmptyDirIsTheHosts(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			p := startSh(t, m.supervise, "pwd -P")
			b, _ := io.ReadAll(p.Stdout())
			want, _ := filepath.EvalSymlinks(wd)
			if got := strings.TrimSpace(string(b)); got != want {
				t.Errorf("server ran in %q, want the host's %q", got, want)
			}
		})
	}
}

// A relative Dir is the host's working directory's, and a relative command
// path is Dir's, as exec.Cmd has them, supervised or not.
func TestRelativeDirAndCommand(t *testing.T) {
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(tmp, "sub", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "sub", "bin", "where"), []byte("#!/bin/sh\npwd -P\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(tmp)
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			p, err := Start(Spec{Command: "./bin/where", Dir: "sub", Env: testEnv(), Supervise: m.supervise})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(time.Second)
			b, _ := io.ReadAll(p.Stdout())
			if got, want := strings.TrimSpace(string(b)), filepath.Join(tmp, "sub"); got != want {
				t.Errorf("server ran in %q, want %q", got, want)
			}
		})
	}
}

// Servers start, close and get killed concurrently while the supervisor
// itself is SIGKILLed now and then. Every Start either fails cleanly or
// yields a server whose Done closes; afterwards no process, fd or goroutine
// is left beyond the one supervisor that runs.
func TestSupervisorChaos(t *testing.T) {
	scripts := []string{"exec cat", "sleep 1000 & exec cat", "(setsid sleep 1000 &); exec cat", "trap '' TERM; exec cat"}
	deadTagBases = map[string]bool{}
	// The supervisor and spawn thread live on. Close has closed the pipes
	// and waited for the stderr reader: the server's exit left nothing
	// else to wait for (its drain timer finds the pipes closed).
	startSh(t, true, "exec cat").Close(time.Second)
	goroutines, fds := runtime.NumGoroutine(), countFDs(t)
	rounds := 30
	if testing.Short() {
		rounds = 10
	}
	started, failed := 0, 0
	for round := range rounds {
		var wg sync.WaitGroup
		var mu sync.Mutex
		for i := range 6 {
			wg.Go(func() {
				p, err := Start(Spec{Command: "sh", Args: []string{"-c", scripts[(round+i)%len(scripts)]}, Env: testEnv(), Supervise: true})
				mu.Lock()
				if err != nil {
					failed++
					mu.Unlock()
					if !strings.Contains(err.Error(), "supervisor") {
						t.Errorf("Start failed for another reason than the supervisor's death: %v", err)
					}
					return
				}
				started++
				mu.Unlock()
				time.Sleep(time.Duration(i) * 3 * time.Millisecond)
				switch i % 3 {
				case 0:
					p.Close(50 * time.Millisecond)
				case 1:
					p.Kill()
					<-p.Done()
					p.Close(0)
				default:
					io.WriteString(p.Stdin(), "x\n")
					p.Close(time.Second)
				}
				select {
				case <-p.Done():
				default:
					t.Errorf("Done open after Close")
				}
			})
		}
		if round%5 == 2 {
			time.Sleep(time.Duration(round%4) * 2 * time.Millisecond)
			if sup := supervisorPid(); sup != 0 {
				deadTagBases[currentTagBase()] = true
				syscall.Kill(sup, syscall.SIGKILL)
			}
		}
		within(t, 30*time.Second, fmt.Sprintf("round %d", round), wg.Wait)
	}
	t.Logf("%d servers started, %d starts failed with the supervisor", started, failed)
	if started == 0 {
		t.Fatal("no server started")
	}
	if got := settle(goroutines, runtime.NumGoroutine); got > goroutines {
		t.Errorf("goroutines: %d before, %d after", goroutines, got)
	}
	if got := settle(fds, func() int { return countFDs(t) }); got > fds {
		t.Errorf("fds: %d before, %d after", fds, got)
	}
	deadline := time.Now().Add(10 * time.Second)
	for kids := descendants(os.Getpid()); len(kids) > 0; kids = descendants(os.Getpid()) {
		if time.Now().After(deadline) {
			t.Fatalf("processes left: %v", kids)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if sups := supervisorsOf(os.Getpid()); len(sups) > 1 {
		t.Errorf("%d supervisors run: %v", len(sups), sups)
	}
	// What escaped to init is no descendant: look for tags of supervisors
	// that are gone, anywhere.
	if left := taggedWith(deadTagBases); len(left) > 0 {
		t.Errorf("processes of dead supervisors left: %v", left)
	}
}

// taggedWith lists the live processes whose tag has one of bases.
func taggedWith(bases map[string]bool) []string {
	var out []string
	for _, pid := range allPids() {
		tag, _ := processTag(pid)
		base, _, ok := strings.Cut(tag, ".")
		if pi, state, _, alive := readProc(pid); ok && alive && state != 'Z' && bases[base+"."] {
			out = append(out, pi.String()+" tag "+tag)
		}
	}
	return out
}

// Bytes that are not UTF-8 in an argument or the environment reach the
// server unchanged, as exec passes them.
func TestNonUTF8ArgsAndEnv(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			p, err := Start(Spec{
				Command:   "sh",
				Args:      []string{"-c", `printf '%s|%s' "$X" "$1" | od -An -tx1 | tr -d ' \n'`, "sh", "a\xffb"},
				Env:       append(testEnv(), "X=\xe9t\xe9"),
				Supervise: m.supervise,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(time.Second)
			b, _ := io.ReadAll(p.Stdout())
			if want := "e974e97c61ff62"; string(b) != want {
				t.Errorf("server saw bytes %s, want %s", b, want)
			}
		})
	}
}

// A key given twice: the last value wins, once, as with exec.Cmd.
func TestDuplicateEnvKeys(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			p, err := Start(Spec{Command: "env", Env: append(testEnv(), "DUP=first", "DUP=second"), Supervise: m.supervise})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(time.Second)
			b, _ := io.ReadAll(p.Stdout())
			if n := strings.Count(string(b), "DUP="); n != 1 || !strings.Contains(string(b), "DUP=second") {
				t.Errorf("environment %q, want one DUP=second", b)
			}
		})
	}
}

// The host runs in a symlinked directory and Dir is "../sib": ".." is
// resolved by the kernel (physically), not by cleaning the path.
func TestRelativeDirThroughSymlink(t *testing.T) {
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"real/proj", "real/sib"} {
		if err := os.MkdirAll(filepath.Join(tmp, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(tmp, "real", "proj"), filepath.Join(tmp, "link")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(tmp, "link"))
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			p, err := Start(Spec{Command: "sh", Args: []string{"-c", "pwd -P"}, Dir: "../sib", Env: testEnv(), Supervise: m.supervise})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(time.Second)
			b, _ := io.ReadAll(p.Stdout())
			if got, want := strings.TrimSpace(string(b)), filepath.Join(tmp, "real", "sib"); got != want {
				t.Errorf("ran in %q, want %q", got, want)
			}
		})
	}
}

// A Start right after the supervisor died, before the host noticed, gets a
// new supervisor instead of failing.
func TestStartRightAfterSupervisorDeath(t *testing.T) {
	for i := range 5 {
		p := startSh(t, true, "exec cat")
		syscall.Kill(supervisorPid(), syscall.SIGKILL)
		io.ReadAll(p.Stdout()) // the server died with it: EOF, as a reconnecting host sees it
		q, err := Start(Spec{Command: "cat", Env: testEnv(), Supervise: true})
		if err != nil {
			t.Fatalf("attempt %d: Start after the supervisor died: %v", i, err)
		}
		q.Close(time.Second)
	}
}

// A server's pid is reused by the next server while the first one's
// leftovers are still being swept: each Process still reads its own end,
// and the sweep does not kill the newcomer. ns_last_pid forces the reuse.
func TestPidReusedDuringSweep(t *testing.T) {
	if err := os.WriteFile("/proc/sys/kernel/ns_last_pid", []byte("1"), 0); err != nil {
		t.Skipf("cannot steer pids here: %v", err)
	}
	// a leaves an orphan that ignores SIGTERM, so its sweep lasts the
	// grace; a's own group is empty, so its pid is free meanwhile.
	a := startSh(t, true, `(trap '' TERM; setsid sh -c "trap '' TERM; echo \$\$ >&2; exec sleep 1000" &); sleep 0.3; exit 7`)
	apid := a.Pid()
	waitStderr(t, a)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if _, err := os.Stat("/proc/" + strconv.Itoa(apid)); err != nil {
			break // reaped
		}
	}
	var b *Process
	for try := 0; try < 20 && b == nil; try++ {
		os.WriteFile("/proc/sys/kernel/ns_last_pid", []byte(strconv.Itoa(apid-1)), 0)
		if p := startSh(t, true, "exec cat"); p.Pid() == apid {
			b = p
		}
	}
	if b == nil {
		t.Skip("could not get a's pid again")
	}
	within(t, 10*time.Second, "a's Done", func() { <-a.Done() })
	var ee *ExitError
	if err := a.ExitErr(); !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Errorf("a's exit: %v, want exit status 7", err)
	}
	select {
	case <-b.Done():
		t.Fatalf("b, a cat waiting on stdin, reads as exited: %v", b.ExitErr())
	default:
	}
	io.WriteString(b.Stdin(), "still here\n")
	line := make([]byte, 11)
	if _, err := io.ReadFull(b.Stdout(), line); err != nil || string(line) != "still here\n" {
		t.Errorf("b after a's sweep: %q, %v", line, err)
	}
}

// A supervisor that no longer answers (stopped here) cannot keep Close
// waiting for ever: its last resort kills that supervisor, Done closes,
// and the next Start gets a new one.
func TestWedgedSupervisor(t *testing.T) {
	p := startSh(t, true, "exec cat")
	sup := supervisorPid()
	if err := syscall.Kill(sup, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(sup, syscall.SIGKILL) })
	within(t, 20*time.Second, "Close", func() { p.Close(100 * time.Millisecond) })
	select {
	case <-p.Done():
	default:
		t.Fatal("Done open after Close")
	}
	if err := p.ExitErr(); !errors.Is(err, errSupervisorGone) {
		t.Errorf("ExitErr = %v, want %v", err, errSupervisorGone)
	}
	checkNewSupervisor(t, sup)
}

// startDuring starts servers for d and returns them.
func startDuring(t *testing.T, d time.Duration) []*Process {
	var news []*Process
	for deadline := time.Now().Add(d); time.Now().Before(deadline); {
		news = append(news, startSh(t, true, "exec cat"))
	}
	return news
}

// countDead closes news and reports how many had died by themselves.
func countDead(t *testing.T, news []*Process) int {
	dead := 0
	for _, p := range news {
		select {
		case <-p.Done():
			dead++
			t.Logf("server %d died: %v", p.Pid(), p.ExitErr())
		default:
		}
		p.Close(0)
	}
	return dead
}

// Servers started while another server's leftovers (a group member that
// ignores SIGTERM) are swept are not taken for its orphans: a fork's child
// is ours before it is registered as a server.
func TestSweepSparesServersStartedDuringIt(t *testing.T) {
	keep := startSh(t, true, "exec cat") // so no sweep is the idle one
	defer keep.Close(time.Second)
	dead, total := 0, 0
	for range 3 {
		a := startSh(t, true, `sh -c "trap '' TERM; exec sleep 1000" & sleep 0.2; exit 0`)
		time.Sleep(150 * time.Millisecond)
		news := startDuring(t, 600*time.Millisecond)
		within(t, 10*time.Second, "a's Done", func() { <-a.Done() })
		time.Sleep(300 * time.Millisecond)
		total += len(news)
		dead += countDead(t, news)
	}
	if dead > 0 {
		t.Errorf("%d of %d servers started during another's sweep were killed", dead, total)
	}
}

// The same for the sweep of untagged orphans once the last server is gone.
func TestIdleSweepSparesServersStartedDuringIt(t *testing.T) {
	dead, total := 0, 0
	for range 3 {
		a := startSh(t, true, `(env -u `+TagEnv+` setsid sh -c "trap '' TERM; exec sleep 1000" &); exit 0`)
		within(t, 10*time.Second, "a's Done", func() { <-a.Done() })
		a.Close(0)
		news := startDuring(t, 500*time.Millisecond)
		time.Sleep(300 * time.Millisecond)
		total += len(news)
		dead += countDead(t, news)
		// The idle sweep ends once a's orphan is gone: the next round
		// starts with nothing below the supervisor.
		if left := waitNoDescendants(supervisorPid(), 10*time.Second); len(left) > 0 {
			t.Fatalf("the idle sweep left %v", left)
		}
	}
	if dead > 0 {
		t.Errorf("%d of %d servers started during the idle sweep were killed", dead, total)
	}
}

// waitNoDescendants waits up to d for every process below pid to be gone,
// and returns those still there.
func waitNoDescendants(pid int, d time.Duration) []procInfo {
	for deadline := time.Now().Add(d); ; time.Sleep(20 * time.Millisecond) {
		if left := descendants(pid); len(left) == 0 || time.Now().After(deadline) {
			return left
		}
	}
}

// The supervisor dies while it sweeps a reaped server's group member that
// ignores SIGTERM: the host kills the member, and the server's exit error
// is its own status, which the reaping already told.
func TestSupervisorDiesMidSweep(t *testing.T) {
	a := startSh(t, true, `sh -c "trap '' TERM; echo \$\$ >&2; exec sleep 1000" & sleep 0.2; exit 3`)
	member := reportedProcess(t, a, "the group member")
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		a.mu.Lock()
		reaped := a.exited
		a.mu.Unlock()
		if reaped {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("never reaped")
		}
	}
	syscall.Kill(supervisorPid(), syscall.SIGKILL)
	within(t, 10*time.Second, "Done", func() { <-a.Done() })
	if left := waitGone([]procInfo{member}, 3*time.Second); len(left) > 0 {
		t.Errorf("group member %v survives the supervisor's death", left)
	}
	var ee *ExitError
	if err := a.ExitErr(); !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("ExitErr = %v, want the server's own exit status 3", err)
	}
}

// An orphan reparented to the supervisor has no parent-death signal: when
// the supervisor is killed it goes to init, and the host kills it by its tag.
func TestOrphanDiesWithKilledSupervisor(t *testing.T) {
	p, orphan := orphanOf(t, "")
	syscall.Kill(supervisorPid(), syscall.SIGKILL) // what Close's last resort does, or the OOM killer
	within(t, 10*time.Second, "Done", func() { <-p.Done() })
	if left := waitGone([]procInfo{orphan}, 5*time.Second); len(left) > 0 {
		_, _, ppid, _ := readProc(orphan.pid)
		t.Errorf("orphan %v (parent %d) outlives its dead supervisor", left, ppid)
	}
}

// The host is SIGKILLed while the supervisor's fork of another server
// hangs: the servers it runs still go within the host-gone grace, not
// when (if ever) that exec returns.
func TestHostKilledDuringSlowSpawn(t *testing.T) {
	host, _, _ := startTestHost(t, "PROC_TEST_SUPERVISE=1", "PROC_TEST_SCRIPT=exec sleep 1000", "PROC_TEST_SLOW_SPAWN=30s")
	tree := waitTree(t, host.Process.Pid, 3, 2) // supervisor, the server, the hanging fork's child
	defer killAll(tree)
	syscall.Kill(host.Process.Pid, syscall.SIGKILL)
	host.Wait()
	if left := waitGone(tree, hostGoneGrace+5*time.Second); len(left) > 0 {
		t.Fatalf("outlived the host while a fork hung: %v", left)
	}
}

// A server exits leaving an orphan while another server's fork hangs: its
// sweep still kills the orphan before Done, rather than waiting the fork
// out and giving up.
func TestSweepDuringSlowSpawn(t *testing.T) {
	a, orphan := orphanOf(t, "")
	slow := make(chan *Process, 1)
	go func() {
		p, _ := Start(Spec{Command: "sh", Args: []string{"-c", "exec sleep 1000"},
			Env: append(testEnv(), slowSpawnEnv+"=5s"), Supervise: true})
		slow <- p
	}()
	time.Sleep(200 * time.Millisecond) // the fork is under way
	within(t, 10*time.Second, "closing a", func() { a.Close(200 * time.Millisecond) })
	select {
	case p := <-slow:
		t.Errorf("a's Close ended only after the hung fork did")
		slow <- p
	default:
	}
	if left := waitGone([]procInfo{orphan}, 0); len(left) > 0 {
		t.Errorf("a's orphan %v outlived a's Done while another fork hung", left)
	}
	if p := <-slow; p != nil {
		p.Close(0)
	}
}

// When the supervisor dies, the host's hunt by tag keeps going until it
// finds nothing: processes that fork while it looks are found too.
func TestTagHuntOutlastsForkingLeftovers(t *testing.T) {
	script := ""
	for range 8 {
		script += `(setsid sh -c 'while :; do sleep 1000 & sleep 0.003; done' &); `
	}
	deadTagBases = map[string]bool{}
	for round := range 3 {
		p := startSh(t, true, script+"exec sleep 1000")
		time.Sleep(300 * time.Millisecond)
		deadTagBases[currentTagBase()] = true
		syscall.Kill(supervisorPid(), syscall.SIGKILL)
		within(t, 10*time.Second, "Done", func() { <-p.Done() })
		if left := taggedWith(deadTagBases); len(left) > 0 {
			t.Errorf("round %d: %d processes of the dead supervisor left, e.g. %v", round, len(left), left[0])
		}
	}
}

// hangExecs makes every execve of the supervisor's children (its forks)
// wait d in the kernel, as on a hung network mount, by strace's fault
// injection; the supervisor's vfork waits with it. It returns a stop func.
func hangExecs(t *testing.T, sup int, d time.Duration) func() {
	t.Helper()
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace is needed to make an exec hang")
	}
	cmd := exec.Command(strace, "-f", "-qq", "-o", "/dev/null", "-e", "trace=execve",
		"-e", fmt.Sprintf("inject=execve:delay_enter=%d", d.Microseconds()), "-p", strconv.Itoa(sup))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := func() { cmd.Process.Kill(); cmd.Wait() }
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", sup))
		if strings.Contains(string(b), "TracerPid:\t"+strconv.Itoa(cmd.Process.Pid)) {
			return stop
		}
		if time.Now().After(deadline) {
			stop()
			t.Skipf("strace could not attach to the supervisor: %s", b)
		}
	}
}

// A server's exec hangs in the kernel: the supervisor goes on serving the
// others. Closing one ends (Done) without the last resort of killing the
// supervisor, before the hung exec returns.
func TestHungExecDoesNotStopTheSupervisor(t *testing.T) {
	a, orphan := orphanOf(t, "")
	sup := supervisorPid()
	stop := hangExecs(t, sup, 8*time.Second)
	defer stop()
	slow := make(chan *Process, 1)
	go func() {
		p, _ := Start(Spec{Command: "sh", Args: []string{"-c", "exec sleep 1000"}, Env: testEnv(), Supervise: true})
		slow <- p
	}()
	time.Sleep(300 * time.Millisecond) // the fork waits on its exec
	within(t, 6*time.Second, "closing a", func() { a.Close(200 * time.Millisecond) })
	select {
	case p := <-slow:
		t.Errorf("a's Close ended only after the hung exec did")
		slow <- p
	default:
	}
	if err := a.ExitErr(); errors.Is(err, errSupervisorGone) {
		t.Errorf("a ended with its supervisor killed: %v", err)
	}
	if now := supervisorPid(); now != sup {
		t.Errorf("supervisor %d replaced by %d", sup, now)
	}
	if left := waitGone([]procInfo{orphan}, 0); len(left) > 0 {
		t.Errorf("a's orphan %v outlived a's Done", left)
	}
	stop()
	if p := <-slow; p != nil {
		p.Close(0)
	}
}

// The host is SIGKILLed while a server's exec hangs in the kernel: the
// servers that run still go within the host-gone grace.
func TestHostKilledDuringHungExec(t *testing.T) {
	host, server, in := startTestHost(t, "PROC_TEST_SUPERVISE=1", "PROC_TEST_SCRIPT=exec sleep 1000", "PROC_TEST_SECOND=1")
	tree := waitTree(t, host.Process.Pid, 2, 1) // the supervisor and the server
	defer killAll(tree)
	_, _, sup, _ := readProc(server)
	stop := hangExecs(t, sup, 20*time.Second)
	defer stop()
	io.WriteString(in, "go\n") // the second server: its exec hangs
	time.Sleep(300 * time.Millisecond)
	syscall.Kill(host.Process.Pid, syscall.SIGKILL)
	host.Wait()
	i := slices.IndexFunc(tree, func(pi procInfo) bool { return pi.pid == server })
	if left := waitGone(tree[i:i+1], hostGoneGrace+3*time.Second); len(left) > 0 {
		t.Fatalf("the server outlived its host while another's exec hung: %v", left)
	}
}

// A frame the supervisor did not read in time may be half written: the
// host retires that supervisor (kills it; its servers go with it), and the
// Start tries once more under a new one, at once, even while the old one
// is still stopped, instead of a stream out of step for good.
func TestHalfWrittenFrameRetiresTheSupervisor(t *testing.T) {
	running := startSh(t, true, "exec cat")
	sup := supervisorPid()
	if err := syscall.Kill(sup, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(sup, syscall.SIGKILL)
	big := testEnv()
	for i := range 6 { // 600 KiB: more than the socket buffers hold, less than exec's limits
		big = append(big, fmt.Sprintf("BIG%d=%s", i, strings.Repeat("x", 100<<10)))
	}
	p, err := Start(Spec{Command: "cat", Env: big, Supervise: true})
	if err != nil {
		t.Fatalf("Start with the supervisor stopped: %v", err)
	}
	defer p.Close(time.Second)
	if now := supervisorPid(); now == sup || now == 0 {
		t.Errorf("the Start ran under supervisor %d, want a new one (the stopped one is %d)", now, sup)
	}
	within(t, 15*time.Second, "the running server's end", func() { <-running.Done() })
	if err := running.ExitErr(); !errors.Is(err, errSupervisorGone) {
		t.Errorf("the old supervisor's server: %v, want %v", err, errSupervisorGone)
	}
}
