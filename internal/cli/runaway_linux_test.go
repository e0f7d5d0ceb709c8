//go:build linux

package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// A runaway watches a process tree that a regression would grow without
// end — a gateway that starts itself, whose child starts itself again —
// and ends it the moment it starts to: issue 16's trap once went from 16 to
// 44 switchboard processes in 6 s, and a later regression of the guard made
// ~700 and a load of 1300 on a 2-core machine.
//
// Two bounds hold the tree:
//   - a watchdog polls /proc every 50 ms from the moment the root starts,
//     and once more than maxServes `switchboard serve` processes run below
//     the root it freezes the whole tree (SIGSTOP, walked until no new
//     process turns up, so that nobody forks or is orphaned meanwhile) and
//     kills it;
//   - where the cgroup v1 pids controller can be written (root on this
//     kind of machine), the root starts in a cgroup of its own whose
//     pids.max caps the tree's tasks, so that even a tree faster than the
//     watchdog cannot fork past it; its members are killed too, including
//     any that were orphaned out of the tree.
type runaway struct {
	root      int
	rootStart string // the root's start time, so a reused pid is never taken for it
	maxServes int
	cgroup    string

	stop    chan struct{}
	done    chan struct{}
	tripped chan struct{}

	mu    sync.Mutex
	most  int
	tasks int // the most tasks the cgroup held at a tick
	trip  []string
}

// runawayTasks is the cgroup's pids.max: tasks, so threads count. A normal
// run of the recursion test peaks at about 25 tasks for the gateway
// (gateway, supervisor, echo server, the wrapped serve that refuses to run)
// and 45 for status; a regression stops forking at the cap.
const runawayTasks = 200

// startRunaway starts cmd, which the log calls name, under a runaway that
// allows at most maxServes `switchboard serve` processes below it. The
// test's cleanup stops the watchdog and kills whatever is left in the
// cgroup.
func startRunaway(t *testing.T, name string, cmd *exec.Cmd, maxServes int) *runaway {
	t.Helper()
	g := &runaway{maxServes: maxServes, stop: make(chan struct{}), done: make(chan struct{}), tripped: make(chan struct{})}
	if cg, err := pidsCgroup(); err != nil {
		t.Logf("runaway: no pids cgroup (%v); the 50 ms watchdog alone bounds the tree", err)
	} else {
		g.cgroup = cg
		// The shell joins the cgroup and then becomes the command, so
		// nothing the command starts is ever outside it.
		cmd.Args = append([]string{"sh", "-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, cg, cmd.Path}, cmd.Args[1:]...)
		cmd.Path = "/bin/sh"
	}
	if err := cmd.Start(); err != nil {
		g.removeCgroup()
		t.Fatalf("starting %v: %v", cmd.Args, err)
	}
	g.root = cmd.Process.Pid
	g.rootStart = procStartTime(g.root)
	go g.watch()
	t.Cleanup(func() {
		g.stopWatching()
		g.mu.Lock()
		t.Logf("runaway %s: at most %d switchboard serve below pid %d, %d tasks in its cgroup (pids.max %d)", name, g.most, g.root, g.tasks, runawayTasks)
		g.mu.Unlock()
		if g.cgroup != "" {
			g.killAll()
			g.removeCgroup()
		}
	})
	return g
}

var runawayCount atomic.Int64

// pidsCgroup makes a cgroup of the v1 pids controller, capped at
// runawayTasks tasks.
func pidsCgroup() (string, error) {
	const base = "/sys/fs/cgroup/pids"
	if _, err := os.Stat(filepath.Join(base, "cgroup.procs")); err != nil {
		return "", err
	}
	dir := filepath.Join(base, fmt.Sprintf("switchboard-test-%d-%d", os.Getpid(), runawayCount.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(runawayTasks)), 0o644); err != nil {
		os.Remove(dir)
		return "", err
	}
	return dir, nil
}

func (g *runaway) watch() {
	defer close(g.done)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-tick.C:
		}
		if !g.rootAlive() {
			return
		}
		serves := g.serves()
		tasks := cgroupTasks(g.cgroup)
		g.mu.Lock()
		g.most = max(g.most, len(serves))
		g.tasks = max(g.tasks, tasks)
		if len(serves) > g.maxServes {
			g.trip = serves
			g.mu.Unlock()
			g.killAll()
			close(g.tripped)
			return
		}
		g.mu.Unlock()
	}
}

// stopWatching ends the watchdog and waits for it. Call it before the root
// is reaped (cmd.Wait), so that a kill never goes to a reused pid.
func (g *runaway) stopWatching() {
	select {
	case <-g.stop:
	default:
		close(g.stop)
	}
	<-g.done
}

// result says how many `switchboard serve` processes ran below the root at
// once at most, and, when that passed maxServes, which they were.
func (g *runaway) result() (most int, trip []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.most, slices.Clone(g.trip)
}

// check fails the test at once if the watchdog tripped.
func (g *runaway) check(t *testing.T) {
	t.Helper()
	select {
	case <-g.tripped:
		_, trip := g.result()
		t.Fatalf("runaway: %d switchboard serve processes below pid %d at once (at most %d allowed); the tree was frozen and killed:\n%s",
			len(trip), g.root, g.maxServes, strings.Join(trip, "\n"))
	default:
	}
}

func (g *runaway) rootAlive() bool {
	return g.rootStart != "" && procStartTime(g.root) == g.rootStart
}

// serves lists the `switchboard serve` processes below the root, and in
// its cgroup (which also holds those orphaned out of the tree).
func (g *runaway) serves() []string {
	pt := readProcTable()
	set := map[int]bool{}
	for _, p := range pt.below(g.root) {
		set[p] = true
	}
	for _, p := range cgroupProcs(g.cgroup) {
		if p != g.root {
			set[p] = true
		}
	}
	var out []string
	for p := range set {
		if c := pt.cmdline[p]; isServe(c) {
			out = append(out, strconv.Itoa(p)+": "+c)
		}
	}
	slices.Sort(out)
	return out
}

// killAll freezes the root (while it is still the process started), every
// process below it and every member of the cgroup, walking again until a
// walk finds no new process, and then kills them all.
func (g *runaway) killAll() {
	frozen := map[int]bool{}
	for range 100 {
		var found []int
		if g.rootAlive() {
			found = append(found, g.root)
			found = append(found, readProcTable().below(g.root)...)
		}
		found = append(found, cgroupProcs(g.cgroup)...)
		fresh := false
		for _, p := range found {
			if !frozen[p] {
				frozen[p], fresh = true, true
				_ = syscall.Kill(p, syscall.SIGSTOP)
			}
		}
		if !fresh {
			break
		}
	}
	for p := range frozen {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
}

func (g *runaway) removeCgroup() {
	if g.cgroup == "" {
		return
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if err := os.Remove(g.cgroup); err == nil || os.IsNotExist(err) || time.Now().After(deadline) {
			return
		}
	}
}

func cgroupTasks(dir string) int {
	if dir == "" {
		return 0
	}
	b, _ := os.ReadFile(filepath.Join(dir, "pids.current"))
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

func cgroupProcs(dir string) []int {
	if dir == "" {
		return nil
	}
	b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if p, err := strconv.Atoi(f); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// procStartTime is field 22 of /proc/pid/stat, or "" when there is no
// such process.
func procStartTime(pid int) string {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(f) < 20 {
		return ""
	}
	return f[19] // fields after comm start at 3 (state); starttime is 22
}

type procTable struct {
	parent  map[int]int
	cmdline map[int]string
}

func readProcTable() procTable {
	pt := procTable{parent: map[int]int{}, cmdline: map[int]string{}}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces.
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) < 2 {
			continue
		}
		pt.parent[p], _ = strconv.Atoi(f[1])
		c, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		pt.cmdline[p] = strings.ReplaceAll(strings.TrimRight(string(c), "\x00"), "\x00", " ")
	}
	return pt
}

// below lists the descendants of pid.
func (pt procTable) below(pid int) []int {
	var out []int
	for p := range pt.parent {
		for q := pt.parent[p]; q > 1; q = pt.parent[q] {
			if q == pid {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

func isServe(cmdline string) bool {
	return strings.Contains(cmdline, "switchboard") && strings.Contains(" "+cmdline+" ", " serve ")
}
