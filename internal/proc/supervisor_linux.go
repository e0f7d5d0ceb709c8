package proc

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

func becomeSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("PR_SET_CHILD_SUBREAPER: %w", err)
	}
	return nil
}

// closeOnExecFrom marks every descriptor from first on close-on-exec.
func closeOnExecFrom(first int) {
	if unix.CloseRange(uint(first), ^uint(0), unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	// Before Linux 5.11: one by one.
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd >= first {
			syscall.CloseOnExec(fd)
		}
	}
}

// helperFiles makes the exec helper's fds 3 and 4 (ends, ours to close
// once it is forked): the write end of its report pipe, whose read end is
// r, and a memory file holding env, NUL-separated.
func helperFiles(env []string) (r *os.File, ends []*os.File, err error) {
	var envFile *os.File
	if fd, err := unix.MemfdCreate("switchboard-server-env", unix.MFD_CLOEXEC); err == nil {
		envFile = os.NewFile(uintptr(fd), "server-env")
	} else {
		// No memfd (before Linux 3.17, or refused by a seccomp filter): a
		// temporary file only we can read, unlinked at once.
		if envFile, err = os.CreateTemp("", "switchboard-env-"); err != nil {
			return nil, nil, err
		}
		os.Remove(envFile.Name())
	}
	var b []byte
	for _, kv := range env {
		b = append(append(b, kv...), 0)
	}
	if _, err := envFile.Write(b); err != nil {
		envFile.Close()
		return nil, nil, err
	}
	if _, err := envFile.Seek(0, io.SeekStart); err != nil {
		envFile.Close()
		return nil, nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		envFile.Close()
		return nil, nil, err
	}
	return r, []*os.File{w, envFile}, nil
}

// Descriptors received from the host are close-on-exec from the start.
const recvmsgFlags = syscall.MSG_CMSG_CLOEXEC

func lockForkForRecv() (unlock func()) { return func() {} }

// serverAttr starts a server in a process group of its own, in the
// supervisor's session, so that what it starts can join no group of the
// user's (not a session of its own: a session leader takes as its terminal
// any tty it opens, and may not call setpgid, which servers do). Should the
// supervisor itself be SIGKILLed, its servers go too.
func serverAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// leftovers lists the live processes a sweep is to kill: the members of
// group pgid, and the orphans below us that owned picks. An orphan is a
// child of ours that is not a live server (orphans are reparented to us,
// the subreaper), taken with everything below it; its owner is the TagEnv
// value of its environment, or of the first process below it that has
// one, or "" when none has. With owned nil, every process below us is
// listed, servers included. complete is false when the orphans could not
// be looked at (no /proc).
//
// A group is also listed as a whole (as -pgid, which the sweep signals as
// a group): group pgid while it has members, and the group of each orphan
// listed, unless it is ours or a live server's, or a fork is under way.
// The supervisor leads a session of its own, so every group of every
// process below us is one our descendants made (or ours, which they may
// join; shutdown ends with a signal to it): no other process can be in it
// (a process may join a group of its own session only). A group signal
// reaches every member at once, a process that forks a successor and
// exits faster than /proc can be read included; listing members one by one
// never catches that one.
//
// Reading every process's stat file costs milliseconds, and a sweep runs at
// every server's exit, so the common case is told without it: the group
// is empty and every orphan (usually none) carries a tag owned rejects.
// That look at the orphans may be one taken after since reaps (see
// orphanView). Called under sv.mu.
func (sv *supState) leftovers(pgid int, owned func(owner string) bool, since uint64) (left []int, complete bool) {
	groupAlive := pgid > 1 && syscall.Kill(-pgid, 0) != syscall.ESRCH
	if sv.nothingLeft(owned, since, groupAlive) {
		return nil, true
	}
	var recent []orphanGroup
	if (owned == nil || len(sv.servers) == 0) && !sv.spawning {
		// Everything is to go (the host is gone, or no server is left to
		// own an orphan): also the groups of orphans that fork and exit
		// too fast to be seen alive (see reap).
		recent = sv.recentOrphanGroups()
	}
	pt, ok := scanProcesses(pgid, recent)
	if !ok {
		return nil, false
	}
	sw := &sweep{sv: sv, pt: pt, pgid: pgid, ownGroup: syscall.Getpgrp(), left: pt.members}
	sw.addRecentGroups(recent)
	if owned != nil {
		sw.markLive()
	}
	if groupAlive && !sw.live[pgid] {
		sw.left = append(sw.left, -pgid)
	}
	sw.takeOrphans(owned)
	if len(sw.liveMember) > 0 {
		sw.left = slices.DeleteFunc(sw.left, func(p int) bool { return sw.liveMember[p] })
	}
	return sw.left, true
}

// nothingLeft tells the common case of leftovers without reading every
// process: with owned nil, we have no children at all; otherwise group
// pgid is empty and every orphan carries a tag owned rejects (an untagged
// orphan's owner is found below it, by the full scan).
func (sv *supState) nothingLeft(owned func(owner string) bool, since uint64, groupAlive bool) bool {
	if owned == nil {
		kids, ok := ownChildren()
		return ok && len(kids) == 0
	}
	v := sv.orphans
	if since == 0 || v == nil || v.reaps < since {
		v = sv.lookAtOrphans()
	}
	clean := v.ok && !groupAlive
	for _, tag := range v.tags {
		clean = clean && tag != "" && !owned(tag)
	}
	return clean
}

// procTable is one read of every live process's stat file.
type procTable struct {
	children map[int][]int // by parent pid
	pgrpOf   map[int]int
	// otherSession holds the recent groups seen with a member in another
	// session than the one they were recorded in.
	otherSession map[int]bool
	members      []int // of the swept group
}

// scanProcesses reads every process (false without /proc), noting the
// members of group pgid and which recent groups have changed session.
func scanProcesses(pgid int, recent []orphanGroup) (procTable, bool) {
	pt := procTable{children: map[int][]int{}, pgrpOf: map[int]int{}, otherSession: map[int]bool{}}
	recentSession := map[int]int{}
	for _, og := range recent {
		recentSession[og.group] = og.session
	}
	pids := allPids()
	if pids == nil {
		return pt, false
	}
	for _, pid := range pids {
		st, ok := readStat(pid)
		if !ok || st.state == 'Z' {
			continue
		}
		pgrp := st.pgrp
		pt.children[st.ppid] = append(pt.children[st.ppid], pid)
		pt.pgrpOf[pid] = pgrp
		if want, ok := recentSession[pgrp]; ok && st.session != want {
			pt.otherSession[pgrp] = true
		}
		if pgid > 1 && pgrp == pgid {
			pt.members = append(pt.members, pid)
		}
	}
	return pt, true
}

// below is root and every process below it.
func (pt procTable) below(root int) []int {
	tree := []int{root}
	for i := 0; i < len(tree); i++ {
		tree = append(tree, pt.children[tree[i]]...)
	}
	return tree
}

// sweep is one leftovers computation after its process scan.
type sweep struct {
	sv       *supState
	pt       procTable
	pgid     int
	ownGroup int
	left     []int
	// What a live server's tree holds is not this sweep's to end, nor is
	// a group with such a member signalled as a whole: a leftover may have
	// joined a group that another server's child made (all share our
	// session), or the other way round. The leftovers' own members are
	// in left one by one.
	live       map[int]bool // groups
	liveMember map[int]bool // pids
	groups     map[int]bool // groups already in left
}

// addRecentGroups lists the recent orphans' groups that still exist and
// still name the same group: not if a process with that id (its leader)
// or a member seen is in another session.
func (sw *sweep) addRecentGroups(recent []orphanGroup) {
	for _, og := range recent {
		g := og.group
		if sid, err := unix.Getsid(g); err == nil && sid != og.session || sw.pt.otherSession[g] {
			continue
		}
		if g != sw.ownGroup && sw.sv.servers[g] == nil && syscall.Kill(-g, 0) == nil {
			sw.left = append(sw.left, -g)
		}
	}
}

// markLive notes every process of a live server's tree, and its groups.
func (sw *sweep) markLive() {
	sw.live, sw.liveMember = map[int]bool{}, map[int]bool{}
	for spid := range sw.sv.servers {
		for _, p := range sw.pt.below(spid) {
			sw.liveMember[p] = true
			if g, ok := sw.pt.pgrpOf[p]; ok {
				sw.live[g] = true
			}
		}
	}
}

// takeOrphans lists the trees of our children that are not live servers
// and that owned picks (all of them with owned nil).
func (sw *sweep) takeOrphans(owned func(owner string) bool) {
	for _, pid := range sw.pt.children[os.Getpid()] {
		switch {
		case owned == nil:
			sw.take(sw.pt.below(pid))
		case sw.sv.servers[pid] != nil:
		default:
			tree := sw.pt.below(pid)
			owner := ""
			for _, p := range tree {
				if owner, _ = processTag(p); owner != "" {
					break
				}
			}
			if owned(owner) {
				sw.take(tree)
			}
		}
	}
}

// take lists tree's processes, and each of their groups as a whole unless
// it is ours, the swept one, a server's or a live one, or a fork is under
// way.
func (sw *sweep) take(tree []int) {
	sw.left = append(sw.left, tree...)
	for _, p := range tree {
		g := sw.pt.pgrpOf[p]
		if g > 1 && g != sw.ownGroup && g != sw.pgid && sw.sv.servers[g] == nil && !sw.live[g] && !sw.sv.spawning && !sw.groups[g] {
			if sw.groups == nil {
				sw.groups = map[int]bool{}
			}
			sw.groups[g] = true
			sw.left = append(sw.left, -g)
		}
	}
}

// peekExited returns the pid and process group of a child that has
// exited, read while it is a zombie (waitid with WNOWAIT leaves it so), or
// pid 0 if none has yet (it does not wait); the caller reaps it. group is
// zero if it could not be read, or is our own.
func peekExited() (pid int, group orphanGroup, err error) {
	var info unix.Siginfo // si_pid stays 0 when no child has exited
	if err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOWAIT|unix.WNOHANG, nil); err != nil {
		return 0, orphanGroup{}, err
	}
	// si_pid follows si_signo, si_errno and si_code, aligned as a pointer.
	word := unsafe.Sizeof(uintptr(0))
	off := (3*4 + word - 1) &^ (word - 1)
	pid = int(*(*int32)(unsafe.Add(unsafe.Pointer(&info), off)))
	if pid == 0 {
		return 0, orphanGroup{}, nil
	}
	if st, ok := readStat(pid); ok && st.pgrp != syscall.Getpgrp() {
		group = orphanGroup{group: st.pgrp, session: st.session}
	}
	return pid, group, nil
}

// allPids lists every process in /proc (nil if it cannot be read).
func allPids() []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	pids := make([]int, 0, len(ents))
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// lookAtOrphans takes and keeps a new orphanView. Called under sv.mu.
func (sv *supState) lookAtOrphans() *orphanView {
	v := &orphanView{reaps: sv.reaps}
	var kids []int
	kids, v.ok = ownChildren()
	for _, pid := range kids {
		if sv.servers[pid] == nil {
			tag, _ := processTag(pid)
			v.tags = append(v.tags, tag)
		}
	}
	sv.orphans = v
	return v
}

// ownChildren lists our children from /proc/self/task/TID/children (each
// thread's own: a reparented orphan may be listed under any of them). ok
// is false where the kernel does not offer those files.
func ownChildren() (pids []int, ok bool) {
	d, err := os.Open("/proc/self/task")
	if err != nil {
		return nil, false
	}
	tids, err := d.Readdirnames(-1)
	d.Close()
	if err != nil || len(tids) == 0 {
		return nil, false
	}
	for _, tid := range tids {
		b, err := os.ReadFile("/proc/self/task/" + tid + "/children")
		if err != nil {
			if os.IsNotExist(err) {
				if _, serr := os.Stat("/proc/self/task/" + tid); serr == nil {
					return nil, false // the kernel has no children files
				}
				continue // the thread exited
			}
			return nil, false
		}
		for _, f := range bytes.Fields(b) {
			if pid, err := strconv.Atoi(string(f)); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids, true
}

// processTag reads TagEnv from the environment pid started with; "" if it
// has none or the file cannot be read.
func processTag(pid int) (string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return "", err
	}
	return environTag(b), nil
}

// environTag finds TagEnv's value in an environ file (NUL-separated
// KEY=VALUE entries, written by the process itself, so anything at all).
func environTag(b []byte) string {
	prefix := []byte(TagEnv + "=")
	for kv := range bytes.SplitSeq(b, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, prefix); ok {
			return string(v)
		}
	}
	return ""
}

// procStat is what the supervisor reads of a process's /proc/PID/stat.
type procStat struct {
	state               byte
	ppid, pgrp, session int
}

// readStat reads and parses /proc/PID/stat.
func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	return parseStat(b)
}

// parseStat reads state, ppid, pgrp and session from /proc/PID/stat. The
// command name may hold spaces and parentheses, so fields start after the
// last ')'.
func parseStat(b []byte) (procStat, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 4 || len(f[0]) != 1 {
		return procStat{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgrp, err2 := strconv.Atoi(string(f[2]))
	sid, err3 := strconv.Atoi(string(f[3]))
	return procStat{f[0][0], ppid, pgrp, sid}, err1 == nil && err2 == nil && err3 == nil
}

// socketPair is the host–supervisor socket, close-on-exec on both ends.
func socketPair() (host, sup *os.File, err error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), "supervisor"), os.NewFile(uintptr(fds[1]), "supervisor"), nil
}
