package proc

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Process groups, sessions and terminals: tests from the eleventh and
// twelfth reviews of the supervisor.

// A server may still put itself in a process group of its own (Python's
// os.setpgrp() at start), as it could under a direct start.
func TestServerMaySetItsProcessGroup(t *testing.T) {
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("perl is needed to call setpgid")
	}
	p := startSh(t, true, `exec perl -e 'if (setpgrp(0, 0)) { print "ok\n" } else { print "setpgrp: $!\n" }'`)
	p.Stdin().Close()
	if b, _ := io.ReadAll(p.Stdout()); string(b) != "ok\n" {
		t.Errorf("a supervised server's setpgid(0, 0): %q", b)
	}
}

// A setsid'ed fork-and-exit loop dies when its supervisor is killed: the
// host's hunt for the dead supervisor's tags kills its group. (Each hop here
// lives 2 ms: the hunt must see one alive to learn the group, which a loop
// of a few hundred µs a hop, on a loaded machine, can escape; the host's
// death, unlike the supervisor's, is not a hunt: see the hop tests.)
func TestSetsidLoopDiesWithAKilledSupervisor(t *testing.T) {
	hop, stop := hopperEach(t, "", "select(undef, undef, undef, 0.002);")
	p := startSh(t, true, "(setsid "+hop+" &); exec sleep 1000")
	if !startsHopping(stop, 20*time.Second) {
		t.Fatal("the hopper never ran")
	}
	syscall.Kill(supervisorPid(), syscall.SIGKILL)
	within(t, 10*time.Second, "Done", func() { <-p.Done() })
	if !stopsHopping(stop, sweepLimit+2*time.Second) {
		t.Errorf("a setsid'd leftover outlived its killed supervisor")
	}
}

// After an upgrade replaced the program's file, the exec helper is still
// this very program, not the new file.
func TestHelperIsTheRunningProgram(t *testing.T) {
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	prog := filepath.Join(dir, "host")
	if err := os.WriteFile(prog, self, 0o755); err != nil {
		t.Fatal(err)
	}
	_, r, in := launchTestHost(t, exec.Command(prog, "-test.run=^$"),
		"PROC_TEST_SUPERVISE=1", "PROC_TEST_SCRIPT=exec sleep 1000", "PROC_TEST_SECOND=1", "PROC_TEST_INDIRECT=1")
	marker := filepath.Join(dir, "ran")
	// An "upgrade": a new file renamed over the old path.
	if err := os.WriteFile(prog+".new", []byte("#!/bin/sh\necho \"$@\" > "+marker+"\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(prog+".new", prog); err != nil {
		t.Fatal(err)
	}
	io.WriteString(in, "go\n")
	var line string
	within(t, 15*time.Second, "the second start", func() { line, _ = r.ReadString('\n') })
	b, _ := os.ReadFile(marker)
	t.Logf("host said %q; replaced program ran with %q", strings.TrimSpace(line), strings.TrimSpace(string(b)))
	if len(b) > 0 || strings.HasPrefix(line, "second error") {
		t.Errorf("the supervisor ran the file now at its path as the exec helper")
	}
}

// A group id seen on an orphan's exit is not signalled once it names
// another group: here, inside a pid namespace with pid_max 1000, an
// unrelated process takes the id within the second the supervisor keeps
// it.
func TestRecentOrphanGroupReusedIsSpared(t *testing.T) {
	if inSmallPidNamespace(t, "TestRecentOrphanGroupReusedIsSpared") {
		pidReuseInner(t)
	}
}

func pidReuseInner(t *testing.T) {
	g, gone := loopGroupGone(t)
	// A bystander outside the supervisor's tree (a child of this host,
	// i.e. of the namespace's init) that gets pid g and leads group g.
	by := exec.Command("perl", "-e", `$g = shift; for (1..5000) { $p = fork; if (!$p) { if ($$ == $g) { setpgrp(0, 0); open(STDOUT, ">/dev/null"); sleep 30 } exit 0 } if ($p == $g) { print "$p\n"; exit 0 } waitpid($p, 0) } exit 1`, strconv.Itoa(g))
	outf, _ := os.Create(t.TempDir() + "/by")
	by.Stdout = outf
	err := by.Run()
	outf.Close()
	outb, _ := os.ReadFile(outf.Name())
	if err != nil {
		t.Fatalf("no bystander got pid %d: %v", g, err)
	}
	t.Logf("bystander %s got pid/group %d %v after the hopper's group emptied", strings.TrimSpace(string(outb)), g, time.Since(gone))
	defer syscall.Kill(g, syscall.SIGKILL)
	// The next server exits while it is the only one: its sweep lists the
	// recent orphan groups.
	p := startSh(t, true, "sleep 0.2 & exit 0") // leaves a child in its group: the sweep is not the quick clean one
	within(t, 10*time.Second, "b's Done", func() { <-p.Done() })
	time.Sleep(300 * time.Millisecond)
	_, state, _, ok := readProc(g)
	t.Logf("bystander %d after the sweep: state %c ok %v (%v after the hopper's group emptied)", g, state, ok, time.Since(gone))
	if !ok || state == 'Z' {
		t.Errorf("the supervisor killed bystander %d, which is no descendant of it", g)
	}
}

// Where memfd_create is refused (a seccomp filter, an old kernel), the
// exec helper gets the server's environment from an unlinked temporary
// file instead.
func TestIndirectExecWithoutMemfd(t *testing.T) {
	startSh(t, true, "exec cat")
	sup := supervisorPid()
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace is needed to refuse memfd_create")
	}
	cmd := exec.Command(strace, "-f", "-qq", "-o", "/dev/null", "-e", "trace=memfd_create",
		"-e", "inject=memfd_create:error=ENOSYS", "-p", strconv.Itoa(sup))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(sup) + "/status")
		if strings.Contains(string(b), "TracerPid:\t"+strconv.Itoa(cmd.Process.Pid)) {
			break
		}
		if time.Now().After(deadline) {
			t.Skip("strace could not attach to the supervisor")
		}
	}
	defer setForceIndirect(true)()
	p, err := Start(Spec{Command: "sh", Args: []string{"-c", "echo $A; exec cat"}, Env: append(testEnv(), "A=through a file"), Supervise: true})
	if err != nil {
		t.Fatalf("an indirect Start without memfd_create: %v", err)
	}
	defer p.Close(time.Second)
	p.Stdin().Close()
	if b, _ := io.ReadAll(p.Stdout()); string(b) != "through a file\n" {
		t.Errorf("the server saw %q", b)
	}
}

// A server that opens a terminal device (a serial port, say) does not take
// it as its controlling terminal: a 0x03 byte on the line is data, not a
// SIGINT (a server is not a session leader).
func TestServerTakesNoTerminalItOpens(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
			if err != nil {
				t.Skip(err)
			}
			defer ptm.Close()
			if err := unix.IoctlSetPointerInt(int(ptm.Fd()), unix.TIOCSPTLCK, 0); err != nil {
				t.Fatal(err)
			}
			n, err := unix.IoctlGetInt(int(ptm.Fd()), unix.TIOCGPTN)
			if err != nil {
				t.Fatal(err)
			}
			slave := "/dev/pts/" + strconv.Itoa(n)
			p := startSh(t, m.supervise, `exec perl -e 'open(T, "+<", "`+slave+`") or die "open: $!"; $|=1; print "opened\n"; sleep 1; print "alive\n"'`)
			p.Stdin().Close()
			buf := make([]byte, 7)
			if _, err := io.ReadFull(p.Stdout(), buf); err != nil || string(buf) != "opened\n" {
				t.Fatalf("server said %q, %v", buf, err)
			}
			ptm.Write([]byte{3}) // one byte of a binary protocol, say
			rest, _ := io.ReadAll(p.Stdout())
			<-p.Done()
			t.Logf("%s: after a 0x03 byte on its tty the server said %q and ended with %v", m.name, rest, p.ExitErr())
			if string(rest) != "alive\n" {
				t.Errorf("%s: a byte on the terminal the server opened killed it (%v)", m.name, p.ExitErr())
			}
		})
	}
}

// The same when the group's id now names a group whose leader is gone: a
// member seen in another session keeps it.
func TestRecentOrphanGroupReusedLeaderGoneIsSpared(t *testing.T) {
	if inSmallPidNamespace(t, "TestRecentOrphanGroupReusedLeaderGoneIsSpared") {
		pidReuseLeaderGoneInner(t)
	}
}

func pidReuseLeaderGoneInner(t *testing.T) {
	g, gone := loopGroupGone(t)
	// A bystander (no descendant of the supervisor, in this host's
	// session) gets pid g, makes group g, leaves a member in it and exits.
	by := exec.Command("perl", "-e", `$g = shift; for (1..5000) { $p = fork; if (!$p) { if ($$ == $g) { setpgrp(0, 0); $m = fork; if (!$m) { open(STDOUT, ">/dev/null"); open(STDERR, ">/dev/null"); sleep 30; exit 0 } print "$m\n"; } exit 0 } waitpid($p, 0); exit 0 if $p == $g } exit 1`, strconv.Itoa(g))
	outb, err := by.Output()
	if err != nil {
		t.Fatalf("no bystander got pid %d: %v", g, err)
	}
	member, _ := strconv.Atoi(strings.TrimSpace(string(outb)))
	if member <= 1 {
		t.Fatalf("bystander said %q", outb)
	}
	defer syscall.Kill(-g, syscall.SIGKILL)
	_, err = unix.Getsid(g)
	t.Logf("group %d: leader gone (getsid: %v), member %d, %v after the hopper's group emptied", g, err, member, time.Since(gone))
	if os.Getenv("PROC_TEST_NOSWEEP") != "1" {
		p := startSh(t, true, "sleep 0.2 & exit 0")
		within(t, 10*time.Second, "b's Done", func() { <-p.Done() })
	}
	time.Sleep(300 * time.Millisecond)
	_, state, _, ok := readProc(member)
	t.Logf("bystander's member %d after the sweep: state %c ok %v (%v after the hopper's group emptied)", member, state, ok, time.Since(gone))
	if !ok || state == 'Z' {
		t.Errorf("the supervisor killed %d, a member of an unrelated group %d whose leader had exited", member, g)
	}
}

// inSmallPidNamespace runs test (this binary's test of that name) again
// inside a new pid namespace whose pid_max is 1000, so that pids wrap
// within a test; inner is true in that run, which does the work.
func inSmallPidNamespace(t *testing.T, test string) (inner bool) {
	t.Helper()
	if os.Getenv("PROC_TEST_PIDNS_INNER") == test {
		return true
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare is needed for a pid namespace")
	}
	cmd := exec.Command("unshare", "-p", "-f", "--mount-proc", "sh", "-c",
		`echo 1000 > /proc/sys/kernel/pid_max && exec "$0" -test.run="^$1\$" -test.v -test.count=1`, os.Args[0], test)
	cmd.Env = append(os.Environ(), "PROC_TEST_PIDNS_INNER="+test)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		t.Logf("inner run (%v):\n%s", err, out.String())
		if err != nil {
			t.Errorf("inner run failed")
		}
	case <-time.After(60 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("inner run hung:\n%s", out.String())
	}
	return false
}

// loopGroupGone runs, in a small pid namespace, a server whose fork-and-exit
// loop has a group of its own, and returns that group's id once the
// server's end has killed the loop (its last sweep, no server left) and the
// group is empty, and when.
func loopGroupGone(t *testing.T) (g int, gone time.Time) {
	t.Helper()
	b, _ := os.ReadFile("/proc/sys/kernel/pid_max")
	t.Logf("pid %d, pid_max %s", os.Getpid(), strings.TrimSpace(string(b)))
	// Pids below 300 are never reused: get past them first.
	exec.Command("perl", "-e", `for (1..400) { $p = fork; exit 0 unless $p; waitpid($p, 0) }`).Run()
	hop, stop := hopper(t, "setpgrp(0, 0) or die;")
	a := startSh(t, true, "("+hop+" &); sleep 0.3; exit 0")
	for deadline := time.Now().Add(5 * time.Second); g == 0 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if b, err := os.ReadFile(stop + ".pgid"); err == nil {
			g, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
	}
	if g <= 1 {
		t.Fatal("no loop group")
	}
	within(t, 15*time.Second, "the server's Done", func() { <-a.Done() })
	for deadline := time.Now().Add(5 * time.Second); syscall.Kill(-g, 0) == nil; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the loop's group never emptied")
		}
	}
	return g, time.Now()
}
