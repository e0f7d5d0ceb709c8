package proc

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/testfuse"
)

// hungServer puts a server script on a FUSE mount whose daemon then stalls
// every open, as a hung network mount would: a stat of the program works
// (so Start's checks pass), its exec waits in the kernel. It returns the
// program's path.
func hungServer(t *testing.T) (*testfuse.FS, string) {
	f := testfuse.Mount(t)
	f.AddFile("server", []byte("#!/bin/sh\nexec cat\n"), 0o755)
	f.Stall(testfuse.Opens)
	return f, filepath.Join(f.Dir, "server")
}

// A server whose program sits on a hung mount holds up no other server's
// start: its exec waits outside the supervisor's one spawn thread. Once
// the mount answers, it starts and serves.
func TestServerOnHungMountHoldsUpNoOther(t *testing.T) {
	f, bin := hungServer(t)
	type started struct {
		p   *Process
		err error
	}
	hung := make(chan started, 1)
	go func() {
		p, err := Start(Spec{Command: bin, Env: testEnv(), Supervise: true})
		hung <- started{p, err}
	}()
	if !f.WaitForHeld(5 * time.Second) {
		t.Fatal("the server's exec never reached the mount")
	}
	within(t, 3*time.Second, "starting another server while one's exec hangs", func() {
		p := startSh(t, true, "exec cat")
		p.Close(time.Second)
	})
	f.Resume()
	var s started
	within(t, 5*time.Second, "the hung server's start once the mount answers", func() { s = <-hung })
	if s.err != nil {
		t.Fatalf("the server on the mount, once it answered: %v", s.err)
	}
	defer s.p.Close(time.Second)
	roundTrip(t, s.p)
}

// A Start that gives up on an exec hanging on a dead mount leaves nothing
// behind: the process waiting in the kernel is killed, not left to finish
// its exec into a server nobody would stop.
func TestStartGivingUpOnHungExecLeavesNothing(t *testing.T) {
	defer setStartTimeout(time.Second)()
	f, bin := hungServer(t)
	_, err := Start(Spec{Command: bin, Env: testEnv(), Supervise: true})
	if err == nil || !strings.Contains(err.Error(), "did not report") {
		t.Fatalf("Start on a hung mount: %v, want the supervisor's timeout", err)
	}
	for deadline := time.Now().Add(5 * time.Second); f.Waiting() > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("a process still waits on the mount after Start gave up")
		}
	}
	f.Resume() // were the exec still pending, it would now start the server
	time.Sleep(300 * time.Millisecond)
	if left := tagged(currentTagBase()); len(left) > 0 {
		t.Errorf("processes of the abandoned start remain: %v", left)
	}
}

// A server started through the exec helper is the one a direct exec would
// have started: same arguments, environment, directory, process group,
// signal mask and dispositions, and file limit.
func TestIndirectExecIsTransparent(t *testing.T) {
	dir := t.TempDir()
	// The last command is an exec: what it reads of /proc/self is what the
	// server had (sh blocks every signal while it forks a child).
	script := `echo "argv: $0 $*"; pwd; env | grep -v -e '^` + TagEnv + `=' -e '^_=' -e '^PWD=' -e '^SHLVL=' | sort;` +
		` ulimit -n; set -- $(cat /proc/$$/stat); [ "$5" = $$ ] && echo "own group"; echo "tagged: ${` + TagEnv + `:+yes}";` +
		` exec grep -E '^Sig(Blk|Ign)' /proc/self/status`
	run := func(indirect bool) string {
		defer setForceIndirect(indirect)()
		p, err := Start(Spec{Command: "sh", Args: []string{"-c", script, "zero", "one", "two"}, Env: append(testEnv(), "A=1", "B=é"), Dir: dir, Supervise: true})
		if err != nil {
			t.Fatal(err)
		}
		p.Stdin().Close()
		b, _ := io.ReadAll(p.Stdout())
		p.Close(time.Second)
		return string(b)
	}
	direct, indirect := run(false), run(true)
	if direct != indirect {
		t.Errorf("through the exec helper:\n%s\ndirect:\n%s", indirect, direct)
	}
	for _, want := range []string{"argv: zero one two", dir, "A=1", "own group", "tagged: yes", "SigBlk:"} {
		if !strings.Contains(indirect, want) {
			t.Errorf("the helper's server did not see %q:\n%s", want, indirect)
		}
	}
}

// An exec the helper cannot do fails Start with the error a direct exec
// gives.
func TestIndirectExecErrors(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "data")
	os.WriteFile(notExec, []byte("x"), 0o644)
	for _, path := range []string{filepath.Join(dir, "missing"), notExec} {
		errs := make([]string, 2)
		for i, indirect := range []bool{false, true} {
			restore := setForceIndirect(indirect)
			_, err := startPath(path)
			restore()
			if err == nil {
				t.Fatalf("%s (indirect %v) started", path, indirect)
			}
			errs[i] = err.Error()
		}
		if errs[0] != errs[1] {
			t.Errorf("%s: the helper says %q, a direct exec %q", path, errs[1], errs[0])
		}
	}
}

func startPath(path string) (*Process, error) {
	p, err := Start(Spec{Command: path, Env: testEnv(), Supervise: true})
	if err == nil {
		p.Close(time.Second)
		return nil, errors.New("started")
	}
	return p, err
}

// roundTrip checks that p, a cat, echoes a line.
func roundTrip(t *testing.T, p *Process) {
	t.Helper()
	if _, err := io.WriteString(p.Stdin(), "ping\n"); err != nil {
		t.Fatal(err)
	}
	var line string
	within(t, 5*time.Second, "the echo", func() { line, _ = bufio.NewReader(p.Stdout()).ReadString('\n') })
	if line != "ping\n" {
		t.Fatalf("echo: %q", line)
	}
}

func tagged(base string) []string { return taggedWith(map[string]bool{base: true}) }

func setStartTimeout(d time.Duration) (restore func()) {
	old := supervisorStartTimeout
	supervisorStartTimeout = d
	return func() { supervisorStartTimeout = old }
}

func setForceIndirect(on bool) (restore func()) {
	old := forceIndirect
	forceIndirect = on
	return func() { forceIndirect = old }
}

// A server started through the exec helper keeps the parent-death signal
// of the supervisor's fork: with its host stopped (so that only the kernel
// can act), killing the supervisor kills it. Direct and indirect alike.
func TestIndirectServerDiesWithItsSupervisor(t *testing.T) {
	for _, indirect := range []string{"0", "1"} {
		host, server, _ := startTestHost(t, "PROC_TEST_SUPERVISE=1", "PROC_TEST_SCRIPT=exec sleep 1000", "PROC_TEST_INDIRECT="+indirect)
		pi, _, sup, _ := readProc(server)
		if sup <= 1 || sup == host.Process.Pid {
			t.Fatalf("indirect=%s: the server's parent is %d, want a supervisor", indirect, sup)
		}
		syscall.Kill(host.Process.Pid, syscall.SIGSTOP)
		syscall.Kill(sup, syscall.SIGKILL)
		gone := waitGone([]procInfo{pi}, 5*time.Second)
		syscall.Kill(host.Process.Pid, syscall.SIGKILL)
		syscall.Kill(host.Process.Pid, syscall.SIGCONT)
		if len(gone) > 0 {
			syscall.Kill(server, syscall.SIGKILL)
			t.Errorf("indirect=%s: the server outlived its supervisor: no parent-death signal", indirect)
		}
	}
}

// mayHang tells a FUSE mount (as it would NFS or SMB) from a local disk,
// and takes what it cannot look at for remote.
func TestMayHang(t *testing.T) {
	f := testfuse.Mount(t)
	f.AddFile("server", []byte("#!/bin/sh\n"), 0o755)
	for path, want := range map[string]bool{
		t.TempDir():                        false,
		"/proc/self":                       false,
		f.Dir:                              true,
		filepath.Join(f.Dir, "server"):     true,
		filepath.Join(t.TempDir(), "none"): true,
	} {
		if got := mayHang(path); got != want {
			t.Errorf("mayHang(%s) = %v, want %v", path, got, want)
		}
	}
}

// A Start whose environment is too large to send is refused on its own:
// the supervisor, and the other servers, go on.
func TestOversizedStartHarmsNoOther(t *testing.T) {
	other := startSh(t, true, "exec cat")
	big := "BIG=" + strings.Repeat("x", 13<<20) // more than maxFrame once in JSON
	_, err := Start(Spec{Command: "sh", Args: []string{"-c", "exec cat"}, Env: append(testEnv(), big), Supervise: true})
	if !errors.Is(err, errTooLarge) {
		t.Errorf("Start with 13 MiB of environment: %v, want %v", err, errTooLarge)
	}
	select {
	case <-other.Done():
		t.Fatalf("another server ended: %v", other.ExitErr())
	case <-time.After(500 * time.Millisecond):
	}
	roundTrip(t, other)
}

// A SIGHUP to the supervisor (pkill -HUP switchboard, to reload a gateway)
// stops nothing; the servers still get SIGHUP's default action.
func TestSupervisorIgnoresSIGHUP(t *testing.T) {
	p := startSh(t, true, "exec cat")
	sup := supervisorPid()
	syscall.Kill(sup, syscall.SIGHUP)
	select {
	case <-p.Done():
		t.Fatalf("the server ended after its supervisor got SIGHUP: %v", p.ExitErr())
	case <-time.After(500 * time.Millisecond):
	}
	if now := supervisorPid(); now != sup {
		t.Errorf("supervisor %d replaced by %d", sup, now)
	}
	roundTrip(t, p)
	q := startSh(t, true, "exec grep SigIgn /proc/self/status")
	b, _ := io.ReadAll(q.Stdout())
	if ign, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(string(b), "SigIgn:")), 16, 64); ign&(1<<(syscall.SIGHUP-1)) != 0 {
		t.Errorf("a server has SIGHUP ignored: %s", b)
	}
}

// A host whose program file was replaced or removed since it started (an
// upgrade under a running gateway) still starts a supervisor of its own
// version when the old one has died.
func TestSupervisorOfARemovedProgram(t *testing.T) {
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(t.TempDir(), "host")
	if err := os.WriteFile(prog, self, 0o755); err != nil {
		t.Fatal(err)
	}
	server, r, in := launchTestHost(t, exec.Command(prog, "-test.run=^$"),
		"PROC_TEST_SUPERVISE=1", "PROC_TEST_SCRIPT=exec sleep 1000", "PROC_TEST_SECOND=1")
	_, _, sup, _ := readProc(server)
	os.Remove(prog) // as an upgrade's rename over it would
	syscall.Kill(sup, syscall.SIGKILL)
	time.Sleep(200 * time.Millisecond)
	io.WriteString(in, "go\n")
	var line string
	within(t, 10*time.Second, "the second start", func() { line, _ = r.ReadString('\n') })
	if !strings.HasPrefix(line, "second ") || strings.HasPrefix(line, "second error") {
		t.Fatalf("a Start after the program was removed: %q", line)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "second ")))
	defer syscall.Kill(pid, syscall.SIGKILL)
	if _, _, newSup, alive := readProc(pid); !alive || newSup == sup || newSup <= 1 {
		t.Errorf("the second server runs under %d (alive %v), want a new supervisor", newSup, alive)
	}
}

// A server holds its own three pipes and nothing else: not another
// server's pipes received at the moment it was forked, nor the exec
// helper's report pipe.
func TestServersInheritNoOtherDescriptors(t *testing.T) {
	var fds []string
	for i := 3; i < 64; i++ {
		fds = append(fds, strconv.Itoa(i))
	}
	// No command substitution: the shell would open descriptors of its own.
	script := `for i in ` + strings.Join(fds, " ") + `; do [ -e /proc/$$/fd/$i ] && printf '%s ' $i; done; exec cat`
	for _, indirect := range []bool{false, true} {
		restore := setForceIndirect(indirect)
		var wg sync.WaitGroup
		out := make([]string, 12)
		for i := range out {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p, err := Start(Spec{Command: "sh", Args: []string{"-c", script}, Env: testEnv(), Supervise: true})
				if err != nil {
					out[i] = err.Error()
					return
				}
				p.Stdin().Close()
				b, _ := io.ReadAll(p.Stdout())
				p.Close(time.Second)
				out[i] = string(b)
			}()
		}
		wg.Wait()
		restore()
		for i, o := range out {
			if o != "" {
				t.Errorf("indirect=%v: server %d holds more than its stdio: fds %s", indirect, i, o)
			}
		}
	}
}

// What the host inherited from its own parent and left open (here fds 3
// and 4) reaches no server.
func TestStrayHostDescriptorsReachNoServer(t *testing.T) {
	dir := t.TempDir()
	report := filepath.Join(dir, "fds")
	var fds []string
	for i := 3; i < 64; i++ {
		fds = append(fds, strconv.Itoa(i))
	}
	// The loop's output is not redirected: the shell would keep its own
	// stdout in a descriptor of its own meanwhile.
	script := `s=; for i in ` + strings.Join(fds, " ") + `; do [ -e /proc/$$/fd/$i ] && s="$s $i"; done; echo $s > ` + report + `; exec sleep 1000`
	stray1, _ := os.Open(os.DevNull)
	stray2, _ := os.Create(filepath.Join(dir, "secret"))
	defer stray1.Close()
	defer stray2.Close()
	host := exec.Command(os.Args[0], "-test.run=^$")
	host.ExtraFiles = []*os.File{stray1, stray2}
	launchTestHost(t, host, "PROC_TEST_SUPERVISE=1", "PROC_TEST_SCRIPT="+script)
	var got []byte
	for deadline := time.Now().Add(5 * time.Second); len(got) == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		got, _ = os.ReadFile(report) // one line once written
	}
	if len(got) == 0 {
		t.Fatal("the server never reported")
	}
	if len(bytes.TrimSpace(got)) > 0 {
		t.Errorf("the server holds the host's inherited descriptors: fds %s", got)
	}
}

// An exec that fails is reaped by ForkExec itself, which the reaper may
// have seen first (waitid WNOWAIT): it must go on reaping the others.
func TestFailedExecsLeaveTheReaperWorking(t *testing.T) {
	if sup := supervisorPid(); sup != 0 { // a fresh one: its reaper's first wait
		syscall.Kill(sup, syscall.SIGKILL)
		for deadline := time.Now().Add(10 * time.Second); supervisorPid() != 0 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
	}
	a := startSh(t, true, "exec cat")
	bad := filepath.Join(t.TempDir(), "notexec")
	os.WriteFile(bad, []byte("#!/bin/sh\n"), 0o644)
	for range 20 {
		if p, err := Start(Spec{Command: bad, Env: testEnv(), Supervise: true}); err == nil {
			p.Close(0)
			t.Fatal("started a file that is not executable")
		}
	}
	a.Stdin().Close() // cat exits at once
	select {
	case <-a.Done():
	case <-time.After(5 * time.Second):
		_, st, _, _ := readProc(a.Pid())
		t.Fatalf("server %d exited (state %c) but its end was not reported", a.Pid(), st)
	}
}

// joinerScript is the part of a server script that starts a process
// trying to join process group group (a perl expression); joined waits
// for its report: the pid that joined, or why it could not.
func joinerScript(t *testing.T, group string) (script string, joined func() (pid int, refusal string)) {
	t.Helper()
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("perl is needed to join another process group")
	}
	file := filepath.Join(t.TempDir(), "joiner")
	script = `(perl -e 'if (!setpgrp(0, ` + group + `)) { open(F, ">` + file + `.tmp"); print F "refused: $!"; close F; rename("` + file + `.tmp", "` + file + `"); exit 1 }` +
		` $SIG{TERM}="IGNORE"; open(F, ">` + file + `.tmp"); print F $$; close F; rename("` + file + `.tmp", "` + file + `"); sleep 1000' &)`
	joined = func() (int, string) {
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			b, err := os.ReadFile(file)
			if err != nil {
				continue
			}
			if j, err := strconv.Atoi(string(b)); err == nil {
				t.Cleanup(func() { syscall.Kill(j, syscall.SIGKILL) })
				return j, ""
			}
			return 0, string(b)
		}
		t.Fatal("the joiner never reported")
		return 0, ""
	}
	return script, joined
}

// bystander starts a sleep standing for a user's process (in process group
// pgid; 0: a group of its own). ended is closed once it has exited, with
// its error in *err; the test's cleanup kills it.
func bystander(t *testing.T, pgid int) (cmd *exec.Cmd, ended <-chan struct{}, err *error) {
	t.Helper()
	cmd = exec.Command("sleep", "1000")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: pgid}
	if e := cmd.Start(); e != nil {
		t.Fatal(e)
	}
	done := make(chan struct{})
	err = new(error)
	go func() { *err = cmd.Wait(); close(done) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })
	return cmd, done, err
}

// A server's process cannot join a process group of the user's session
// (here another job's): servers run in the supervisor's session, so no
// group a sweep signals can hold anything but ours. The other job lives.
func TestServersCannotJoinTheUsersJobs(t *testing.T) {
	job, ended, err := bystander(t, 0) // the user's job, a group of its own
	join, joined := joinerScript(t, strconv.Itoa(job.Process.Pid))
	p := startSh(t, true, join+"; sleep 0.3; exit 0")
	if pid, refusal := joined(); pid != 0 || !strings.HasPrefix(refusal, "refused") {
		t.Errorf("a server's process joined another job's group: pid %d, %q", pid, refusal)
	}
	within(t, 15*time.Second, "Done", func() { <-p.Done() })
	select {
	case <-ended:
		t.Errorf("another job's process was killed by the sweep: %v", *err)
	case <-time.After(time.Second):
	}
}

// Nor can it join the host's job (`switchboard | tee log`), which the host's
// death thus leaves alone.
func TestHostDeathSparesTheHostsJob(t *testing.T) {
	join, joined := joinerScript(t, `getpgrp('"$HP"')`)
	script := `HP=$(cut -d' ' -f4 /proc/$PPID/stat); ` + join + `; exec sleep 1000`
	host := exec.Command(os.Args[0], "-test.run=^$")
	host.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a job of its own
	launchTestHost(t, host, "PROC_TEST_SUPERVISE=1", "PROC_TEST_SCRIPT="+script)
	_, ended, err := bystander(t, host.Process.Pid) // `| tee log`, in the host's job
	if pid, refusal := joined(); pid != 0 || !strings.HasPrefix(refusal, "refused") {
		t.Errorf("a server's process joined the host's group: pid %d, %q", pid, refusal)
	}
	host.Process.Kill()
	host.Wait()
	select {
	case <-ended:
		t.Errorf("the user's process in the host's job was killed: %v", *err)
	case <-time.After(hostGoneGrace + leftoverGrace + time.Second):
	}
}

// The exec helper's server gets its environment entry for entry, even
// ones Go's own copy would merge ("=A=1" and "=B=2" share the key "").
func TestIndirectExecKeepsEveryEnvironmentEntry(t *testing.T) {
	run := func(indirect bool) string {
		defer setForceIndirect(indirect)()
		p, err := Start(Spec{Command: "cat", Args: []string{"/proc/self/environ"}, Env: append(testEnv(), "=A=1", "=B=2", "LD_X=1"), Supervise: true})
		if err != nil {
			t.Fatal(err)
		}
		p.Stdin().Close()
		b, _ := io.ReadAll(p.Stdout())
		p.Close(time.Second)
		var keep []string
		for _, kv := range strings.Split(string(b), "\x00") {
			if !strings.HasPrefix(kv, TagEnv+"=") && kv != "" {
				keep = append(keep, kv)
			}
		}
		slices.Sort(keep)
		return strings.Join(keep, " ")
	}
	if d, i := run(false), run(true); d != i {
		t.Errorf("environment differs:\ndirect:   %q\nindirect: %q", d, i)
	}
}

// The server's loader variables do not apply to the exec helper (our own
// program, which may be dynamically linked): a static server that runs
// with a broken LD_LIBRARY_PATH directly runs so through the helper too.
func TestIndirectExecIgnoresTheServersLoaderVariables(t *testing.T) {
	libs := t.TempDir()
	os.WriteFile(filepath.Join(libs, "libc.so.6"), nil, 0o755) // a broken libc
	server, err := exec.LookPath("go")                         // the Go toolchain is static
	if err != nil {
		t.Skip("no go command")
	}
	run := func(indirect bool) string {
		defer setForceIndirect(indirect)()
		p, err := Start(Spec{Command: server, Args: []string{"version"}, Env: append(testEnv(), "LD_LIBRARY_PATH="+libs), Supervise: true})
		if err != nil {
			return "Start: " + err.Error()
		}
		defer p.Close(time.Second)
		p.Stdin().Close()
		b, _ := io.ReadAll(p.Stdout())
		return string(b)
	}
	direct := run(false)
	if !strings.HasPrefix(direct, "go version") {
		t.Skipf("%s does not run with the broken library path here: %q", server, direct)
	}
	if indirect := run(true); indirect != direct {
		t.Errorf("through the helper: %q, directly: %q", indirect, direct)
	}
}

// The exec helper is a Go program: the server's GO* variables (here a
// GOMEMLIMIT meant for another tool, which the Go runtime refuses) do not
// reach it.
func TestIndirectExecIgnoresTheServersGoVariables(t *testing.T) {
	run := func(indirect bool) string {
		defer setForceIndirect(indirect)()
		p, err := Start(Spec{Command: "sh", Args: []string{"-c", "echo started $GOMEMLIMIT"}, Env: append(testEnv(), "GOMEMLIMIT=1GB", "GODEBUG=nonsense=1"), Supervise: true})
		if err != nil {
			return "Start: " + err.Error()
		}
		defer p.Close(time.Second)
		p.Stdin().Close()
		b, _ := io.ReadAll(p.Stdout())
		return strings.TrimSpace(string(b))
	}
	if direct, indirect := run(false), run(true); direct != "started 1GB" || indirect != direct {
		t.Errorf("direct: %q; through the helper: %q", direct, indirect)
	}
}

// Spawns the host gave up on while they waited behind a slow one cost the
// supervisor no descriptor.
func TestAbandonedIndirectSpawnsLeakNothing(t *testing.T) {
	startSh(t, true, "exec cat")
	sup := supervisorPid()
	time.Sleep(300 * time.Millisecond)
	fds := func() int { ents, _ := os.ReadDir("/proc/" + strconv.Itoa(sup) + "/fd"); return len(ents) }
	before := fds()
	restoreTimeout := setStartTimeout(500 * time.Millisecond)
	defer restoreTimeout()
	restoreIndirect := setForceIndirect(true)
	defer restoreIndirect()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the slow one: the others queue behind it
		defer wg.Done()
		if p, err := Start(Spec{Command: "sh", Args: []string{"-c", "exec cat"}, Env: append(testEnv(), slowSpawnEnv+"=3s"), Supervise: true}); err == nil {
			p.Close(0)
		}
	}()
	time.Sleep(200 * time.Millisecond)
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if p, err := Start(Spec{Command: "sh", Args: []string{"-c", "exec cat"}, Env: testEnv(), Supervise: true}); err == nil {
				p.Close(0)
			}
		}()
	}
	wg.Wait()
	// One spawn thread takes the spawns in turn: once a later one has
	// started, the slow spawn has ended and the queued ones were dropped.
	restoreTimeout()
	restoreIndirect()
	p, err := Start(Spec{Command: "sh", Args: []string{"-c", "exec cat"}, Env: testEnv(), Supervise: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(0)
	// The supervisor drops its copies of a server's pipes just after it
	// announces the server, and a killed helper's report pipe once the
	// helper's death reaches it: both come a moment after Start returns.
	// A leak stays; a late close does not.
	if after := settle(before, fds); after > before {
		t.Errorf("the supervisor holds %d descriptors more than before", after-before)
	}
}

// The supervisor never sits in a blocking wait for its children: under
// Go 1.26 a goroutine entering one just as a garbage collection stops the
// world can hold the whole process, and so every server start, for a
// minute. Its reaper waits for SIGCHLD instead; /proc shows which system
// call each of its threads is blocked in.
func TestSupervisorNeverSitsInAWait(t *testing.T) {
	startSh(t, true, "exec cat")
	sup := supervisorPid()
	for range 5 {
		time.Sleep(100 * time.Millisecond)
		tasks, err := os.ReadDir("/proc/" + strconv.Itoa(sup) + "/task")
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range tasks {
			b, err := os.ReadFile("/proc/" + strconv.Itoa(sup) + "/task/" + task.Name() + "/syscall")
			if err != nil {
				continue // the thread ended
			}
			nr, _, _ := strings.Cut(string(b), " ")
			if n, err := strconv.Atoi(strings.TrimSpace(nr)); err == nil && (n == syscall.SYS_WAIT4 || n == syscall.SYS_WAITID) {
				t.Fatalf("thread %s of the supervisor is blocked in a wait (system call %d)", task.Name(), n)
			}
		}
	}
}

// The supervisor runs under the program's own name (ps, pgrep), not as
// "exe" from /proc/self/exe, while the program's file is in place.
func TestSupervisorKeepsTheProgramsName(t *testing.T) {
	startSh(t, true, "exec cat")
	comm, _ := os.ReadFile("/proc/" + strconv.Itoa(supervisorPid()) + "/comm")
	want := filepath.Base(os.Args[0])
	if len(want) > 15 {
		want = want[:15]
	}
	if got := strings.TrimSpace(string(comm)); got != want {
		t.Errorf("the supervisor is named %q, want %q", got, want)
	}
}

// A server waiting in the kernel for a mount whose daemon took the request
// and lost its peer (sshfs, rclone) cannot be killed by anyone. Closing it
// fails with an error saying so, and leaves every other server running:
// the supervisor is not wedged, and killing it would not free the server.
// Once the mount answers, the server's death is reported as any other.
func TestUnkillableServerSparesTheOthers(t *testing.T) {
	unkillableSparesTheOthers(t, func(data string) *Process {
		return startSh(t, true, "exec cat "+data)
	})
}

// The same with the read on a worker thread, as Node and Python servers
// read files: SIGKILL ends the main thread (its task is a zombie) while the
// held thread keeps the process alive; that is the kernel's doing too, and
// must not take the supervisor and every other server down (review 15).
func TestUnkillableThreadedServerSparesTheOthers(t *testing.T) {
	unkillableSparesTheOthers(t, func(data string) *Process {
		stuck, err := Start(Spec{Command: os.Args[0], Supervise: true,
			Env: append(testEnv(), "PROC_TEST_ROLE=threadread", "PROC_TEST_FILE="+data)})
		if err != nil {
			t.Fatal(err)
		}
		return stuck
	})
}

// unkillableSparesTheOthers starts, beside another server, a server that
// start makes read a file on a mount whose daemon took the read and never
// answers; closing it must say it waits in the kernel and leave the other
// server and the supervisor alone, and its end is reported once the mount
// answers.
func unkillableSparesTheOthers(t *testing.T, start func(data string) *Process) {
	f := testfuse.Mount(t)
	f.AddFile("data", []byte("x"), 0o644)
	f.Stall(testfuse.Opens)
	f.Deafen()
	defer f.Resume()
	other := startSh(t, true, "exec cat")
	stuck := start(filepath.Join(f.Dir, "data"))
	if !f.WaitForHeld(10 * time.Second) {
		t.Fatal("the server's open never reached the mount")
	}
	sup := supervisorPid()
	err := stuck.Close(100 * time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "waiting in the kernel") {
		t.Errorf("Close of the stuck server: %v; want an error saying it waits in the kernel", err)
	}
	select {
	case <-other.Done():
		t.Fatalf("closing an unkillable server ended another server: %v", other.ExitErr())
	case <-time.After(300 * time.Millisecond):
	}
	if now := supervisorPid(); now != sup {
		t.Errorf("supervisor %d replaced by %d", sup, now)
	}
	roundTrip(t, other)
	f.Resume()
	within(t, 5*time.Second, "the stuck server's end once the mount answers", func() { <-stuck.Done() })
}

// A server inherits the signals its host had ignored (nohup, a shell's
// background job), under the supervisor as when the host starts it itself
// (review 14: the supervisor's SIGINT handler gave supervised servers the
// default action).
func TestServersKeepTheHostsIgnoredSIGINT(t *testing.T) {
	for _, supervise := range []string{"0", "1"} {
		host := exec.Command("sh", "-c", `trap "" INT; exec "$0"`, os.Args[0])
		server, _, _ := launchTestHost(t, host, "PROC_TEST_SUPERVISE="+supervise, "PROC_TEST_SCRIPT=exec sleep 1000")
		b, err := os.ReadFile(("/proc/" + strconv.Itoa(server) + "/status"))
		if err != nil {
			t.Fatal(err)
		}
		var ign uint64
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "SigIgn:"); ok {
				ign, _ = strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			}
		}
		if ign&(1<<(syscall.SIGINT-1)) == 0 {
			t.Errorf("supervise=%s: the server does not ignore SIGINT (SigIgn %#x), which its host ignored", supervise, ign)
		}
	}
}

// One server's leftover can join a process group made by another, live,
// server's child (same session: allowed). Sweeping the first server's
// leftovers must not signal that group: it holds the other server's
// process, which is not the first server's to end.
func TestLeftoverInAnotherServersGroupSparesIt(t *testing.T) {
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("perl is needed")
	}
	// Server B runs a helper in a process group of its own (as a Go server
	// with Setpgid, or Python's process_group=0, does), and waits.
	b := startSh(t, true, `perl -e 'setpgrp(0,0); exec "sleep", "1000"' & echo $! >&2; wait`)
	hi := reportedProcess(t, b, "B's helper")
	helper := hi.pid
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if groupOf(helper) == helper {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("B's helper never made its group")
		}
	}
	// Server A leaves an orphan that joins that group, then exits.
	join, joined := joinerScript(t, strconv.Itoa(helper))
	a := startSh(t, true, join+"; sleep 0.3; exit 0")
	j, refusal := joined()
	if j == 0 {
		t.Skipf("could not join: %s", refusal)
	}
	within(t, 15*time.Second, "A's Done", func() { <-a.Done() })
	time.Sleep(500 * time.Millisecond)
	if !alive(hi) {
		t.Errorf("server B's helper %v was killed by the sweep of server A's leftovers", hi)
	}
	select {
	case <-b.Done():
		t.Errorf("server B ended: %v", b.ExitErr())
	default:
	}
}
