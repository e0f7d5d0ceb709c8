package proc

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hopper is a shell command for a process that first runs the perl
// statement first (e.g. one that changes its process group), then forks a
// successor and exits, over and over (a few hundred µs a hop, faster than /proc can be
// read), ignoring SIGTERM, until the file stop exists. It writes its group
// to stop.pgid and a heartbeat to stop.beat. The test's cleanup stops it
// for sure: the stop file, then SIGKILL to its group.
func hopper(t *testing.T, first string) (cmd, stop string) {
	t.Helper()
	return hopperEach(t, first, "")
}

// hopperEach is hopper whose every hop first runs the perl statement each.
func hopperEach(t *testing.T, first, each string) (cmd, stop string) {
	beat := "200" // hops between heartbeats: a few every hopping window
	if each != "" {
		beat = "10"
	}
	t.Helper()
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("perl is needed for a process that forks faster than /proc can be read")
	}
	stop = t.TempDir() + "/stop"
	t.Cleanup(func() {
		os.WriteFile(stop, nil, 0o600)
		time.Sleep(100 * time.Millisecond)
		if b, err := os.ReadFile(stop + ".pgid"); err == nil {
			if g, _ := strconv.Atoi(string(b)); g > 1 {
				syscall.Kill(-g, syscall.SIGKILL)
			}
		}
	})
	// It also stops by itself after a minute, whatever happens to the test.
	cmd = `perl -e '` + first + ` open(P, ">` + stop + `.pgid"); print P getpgrp(); close P; $SIG{TERM}="IGNORE"; $end = time + 60;` +
		` while (1) { exit 0 if -e "` + stop + `" or time > $end; ` + each + ` exit 0 if fork; if (++$n % ` + beat + ` == 0) { open(F, ">>` + stop + `.beat"); print F "$$\n"; close F } }'`
	return cmd, stop
}

// beats is the size of the hopper of stop's heartbeat file.
func beats(stop string) int64 {
	if fi, err := os.Stat(stop + ".beat"); err == nil {
		return fi.Size()
	}
	return 0
}

// hopping reports whether the hopper of stop still runs: its heartbeat
// grows within half a second.
func hopping(stop string) bool {
	a := beats(stop)
	time.Sleep(500 * time.Millisecond)
	return beats(stop) > a
}

// startsHopping waits up to d for the hopper of stop to be seen forking:
// on a busy machine the host may take a while to start its server, and a
// single look would call a slow start "never ran".
func startsHopping(stop string, d time.Duration) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); {
		if hopping(stop) {
			return true
		}
	}
	return false
}

// hopperQuiet is how long a hopper's heartbeat must stay still for it to
// count as stopped: on a busy machine a live hopper can go a second or
// two between beats, so a single half-second look is not enough.
const hopperQuiet = 5 * time.Second

// stopsHopping waits up to d for the hopper of stop to stop: its last
// beat comes within d, and none follows for hopperQuiet.
func stopsHopping(stop string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	last, since := beats(stop), time.Now()
	for {
		time.Sleep(100 * time.Millisecond)
		if n := beats(stop); n != last {
			if time.Now().After(deadline) {
				return false
			}
			last, since = n, time.Now()
			continue
		}
		if time.Since(since) >= hopperQuiet {
			return true
		}
	}
}

// A leftover in a server's group that keeps changing pid dies with the
// server: the sweep signals the group as a whole, and reports the server
// done only once the group is empty.
func TestForkingLeftoverDiesWithItsServer(t *testing.T) {
	hop, stop := hopper(t, "")
	startSh(t, true, "exec cat") // a live server: no idle sweep
	p := startSh(t, true, "("+hop+" &); sleep 0.3; exit 0")
	pgid := p.Pid()
	within(t, 15*time.Second, "Done", func() { <-p.Done() })
	if syscall.Kill(-pgid, 0) == nil {
		t.Errorf("the exited server's group %d still has members after Done", pgid)
	}
	if !stopsHopping(stop, 3*time.Second) {
		t.Errorf("the leftover still forks after its server's Done")
	}
}

// A process that forks and exits over and over dies with the host, in the
// server's group, in a group of its own, in a session of its own or in the
// supervisor's group.
func TestForkingLeftoversDieWithTheHost(t *testing.T) {
	for _, tc := range []struct{ name, first, script string }{
		{"in the server's group", "", "(HOP &); exec sleep 1000"},
		{"in a group of its own", "setpgrp(0, 0) or die;", "(HOP &); exec sleep 1000"},
		{"setsid", "", "(setsid HOP &); exec sleep 1000"},
		// Allowed (same session), and never signalled by a sweep: the
		// supervisor's last act is a signal to its own group.
		{"in the supervisor's group", `open(S, "/proc/self/stat"); $s = <S>; close S; $s =~ s/.*\) //; @f = split / /, $s;` +
			` setpgrp(0, $f[3]) or die "setpgrp: $!";`, "(HOP &); exec sleep 1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hop, stop := hopper(t, tc.first)
			host, _, _ := startTestHost(t, "PROC_TEST_SCRIPT="+strings.Replace(tc.script, "HOP", hop, 1), "PROC_TEST_SUPERVISE=1")
			if !startsHopping(stop, 20*time.Second) {
				t.Fatal("the hopper never ran")
			}
			syscall.Kill(host.Process.Pid, syscall.SIGKILL)
			host.Wait()
			if !stopsHopping(stop, hostGoneGrace+leftoverGrace+sweepLimit+2*time.Second) {
				t.Errorf("a descendant of the server outlived the host")
			}
		})
	}
}

// A fork-and-exit loop that left its server's group is not told apart
// from another server's leftovers while servers run (its hops are never
// seen alive to read their tag), but it dies once no server is left.
func TestForkingOrphanDiesWithTheLastServer(t *testing.T) {
	for _, tc := range []struct{ name, first, script string }{
		{"in a group of its own", "setpgrp(0, 0) or die;", "(HOP &); sleep 0.3; exit 0"},
		{"setsid", "", "(setsid HOP &); sleep 0.3; exit 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hop, stop := hopper(t, tc.first)
			p := startSh(t, true, strings.Replace(tc.script, "HOP", hop, 1))
			within(t, 15*time.Second, "Done", func() { <-p.Done() })
			if !stopsHopping(stop, leftoverGrace+sweepLimit+2*time.Second) {
				t.Errorf("the loop outlived the last server")
			}
		})
	}
}
