//go:build linux || darwin

package proc

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	canSupervise = true
	// hostGoneGrace is how long servers have between SIGTERM and SIGKILL
	// once the host has died.
	hostGoneGrace = 2 * time.Second
	// leftoverGrace is the same for what a server leaves behind when it exits.
	leftoverGrace = 500 * time.Millisecond
	// sweepLimit bounds the hunt for stragglers after SIGKILL.
	sweepLimit = 3 * time.Second
	// parentPoll is how often the host's liveness is checked: a backstop
	// to the socket's EOF and (on Linux) the parent-death signal.
	parentPoll = 500 * time.Millisecond
)

// TagEnv names the variable the supervisor adds to each server's
// environment: a tag unique to that server, inherited by what it starts.
// It is how the supervisor tells whose an orphan is once the orphan's
// parent has died and it has been reparented to the supervisor.
const TagEnv = "SWITCHBOARD_PROC_TAG"

// supServer is a server as the supervisor knows it.
type supServer struct {
	id        uint64 // the host's spawn ID
	pid       int
	tag       string
	reapSeq   uint64      // sv.reaps once it was reaped
	killNow   atomic.Bool // the host sent SIGKILL: no grace for leftovers
	groupGone atomic.Bool // its group was seen empty: its id may be reused

	// Guarded by mu. A server started through the exec helper is announced
	// to the host (its pid) only once the helper's exec has succeeded; one
	// reaped before that waits in held. One that failed (the exec, or the
	// host gave up on it) is never announced, and its end is not reported.
	announced bool
	failed    bool
	held      *syscall.WaitStatus

	fwd *netForwarder // its sandbox's network forwarder, closed once it and its leftovers are gone

	// init: it is a sandbox helper, which stays as the server's pid 1 and
	// reports the server's exit status (see sandboxPlan.serve). Its end
	// is held (in held) until awaitExec has read that report (reported).
	init     bool
	reported bool
	status   *syscall.WaitStatus // the server's, as the helper reported it
}

// orphanView is one look at the orphans below us (our children that are
// not servers) with their tags, taken under mu once reaps servers had been
// reaped. When many servers exit at once, one look serves them all.
type orphanView struct {
	reaps uint64
	tags  []string
	ok    bool // false: the kernel could not list our children
}

// spawnJob is a spawn request with the pipes that came with it.
type spawnJob struct {
	req   spawnReq
	files []*os.File
}

// supState is the supervisor's state. mu guards the maps and is held
// while a sweep looks at the tree; it is not held across a fork, which may
// wait long for a slow exec. While one is under way (spawning), its child
// is ours but not yet a server: untagged before its exec, spawnTag after,
// and sweeps count both as a live server's (see liveTag).
type supState struct {
	conn    *net.UnixConn
	hostPid int
	tagBase string

	wmu sync.Mutex // one event line at a time

	mu           sync.Mutex
	seq          int
	servers      map[int]*supServer    // live, by pid (unique until reaped)
	ending       map[uint64]*supServer // reaped, their sweep not finished, by ID
	spawning     bool                  // a fork is between ForkExec and its registration
	spawnTag     string                // that fork's child's tag, once it has exec'd
	early        map[int]syscall.WaitStatus
	queued       map[uint64]bool           // spawns not yet registered; true: the host gave up on it
	orphanGroups map[orphanGroup]time.Time // groups seen on orphans' exits, and when (see reap)
	reaps        uint64
	orphans      *orphanView // the last look, nil before the first

	spawns   chan spawnJob // to the spawn thread
	kick     chan struct{} // a server was started: the reaper may wait again
	hostGone chan struct{}
	goneOnce sync.Once
}

// runSupervisor implements the supervisor mode. args are HOSTPID and the
// base of its servers' tags (see newTagBase); fd 3 is the socket to the
// host. It starts every supervised server of that host,
// reaps them and what they leave, and when the host dies stops them all.
func runSupervisor(args []string) int {
	// Servers get Pdeathsig=SIGKILL, which belongs to the thread that forks
	// them: this one, which spawns them all and lives as long as we do.
	runtime.LockOSThread()
	hostPid := 0
	if len(args) == 2 && validTagBase(args[1]) {
		hostPid, _ = strconv.Atoi(args[0])
	}
	if hostPid <= 0 {
		fmt.Fprintln(os.Stderr, "switchboard supervisor: bad arguments")
		return 2
	}
	syscall.CloseOnExec(3) // the socket is not the servers'
	// Nor is anything else we inherited: the host passes on whatever its
	// own parent left open (a shell's descriptors, a secret passed as
	// --password-fd). A server gets its three pipes and nothing more.
	closeOnExecFrom(4)
	f := os.NewFile(3, "control")
	c, err := net.FileConn(f)
	f.Close()
	uc, ok := c.(*net.UnixConn)
	if err != nil || !ok {
		fmt.Fprintf(os.Stderr, "switchboard supervisor: fd 3 is not the host's socket: %v\n", err)
		return 2
	}
	sv := &supState{
		conn:         uc,
		hostPid:      hostPid,
		tagBase:      args[1],
		servers:      map[int]*supServer{},
		ending:       map[uint64]*supServer{},
		early:        map[int]syscall.WaitStatus{},
		queued:       map[uint64]bool{},
		orphanGroups: map[orphanGroup]time.Time{},
		spawns:       make(chan spawnJob, 1024),
		kick:         make(chan struct{}, 1),
		hostGone:     make(chan struct{}),
	}
	// The helper is this very program, whatever is at its path now (an
	// upgrade may have replaced the file): the kernel's link where there
	// is one (its name does not matter, it lasts until the exec).
	selfExe = selfExeLink
	if _, err := os.Stat(selfExeLink); err != nil {
		selfExe = selfProgram()
	}
	// See collectGarbage: no collection but ours, short of this bound.
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(supervisorMemoryLimit)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM)
	// SIGINT too, unless the host had it ignored: catching it would give
	// the servers the default action, where a server started by the host
	// itself would inherit the ignoring (nohup, a backgrounded job).
	if !signal.Ignored(syscall.SIGINT) {
		signal.Notify(sigs, syscall.SIGINT)
	}
	// SIGHUP is not a reason to stop: `pkill -HUP switchboard` asks a
	// gateway to reload, and a stopped supervisor whose host died gets one
	// (the host's death is known otherwise). Caught, not ignored, so that
	// the servers get the default; one ignored at start (nohup) stays so,
	// for them too.
	if !signal.Ignored(syscall.SIGHUP) {
		signal.Notify(make(chan os.Signal, 1), syscall.SIGHUP)
	}
	if err := becomeSubreaper(); err != nil {
		fmt.Fprintf(os.Stderr, "switchboard supervisor: %v\n", err)
	}
	if os.Getppid() != hostPid {
		return 1 // the host died before we could serve it
	}
	go sv.reap()
	go sv.watchHost(sigs)
	go sv.serve()
	go func() {
		// Not after the spawn loop: an exec that hangs there must not
		// hold up the servers' end. Exiting also fires the Pdeathsig of
		// whatever that fork started.
		<-sv.hostGone
		sv.shutdown()
		// Last, our own group: what a server's descendants put in it (they
		// may join it: same session) dies with us, even a process that
		// forks and exits too fast to be found.
		syscall.Kill(0, syscall.SIGKILL)
		os.Exit(0)
	}()
	for job := range sv.spawns {
		select {
		case <-sv.hostGone:
			closeAll(job.files)
		default:
			sv.spawn(job.req, job.files)
		}
	}
	select {} // shutdown exits
}

// selfExe is the supervisor's own program, which it runs as the exec
// helper (see spawn).
var selfExe string

// The exec helper must exec from the process's first thread: the
// parent-death signal the supervisor's fork set belongs to that thread
// (threads made since have none), and an exec keeps the calling thread's.
// Locked during package init, main runs on it too.
func init() {
	if len(os.Args) > 1 && (os.Args[1] == ExecHelperArg || os.Args[1] == SandboxHelperArg) {
		runtime.LockOSThread()
	}
}

// runExecHelper is the exec helper's mode: args are the server's
// directory, program and argv; fd 4 holds its environment (NUL-separated
// entries), fd 3 is the supervisor's report pipe. It changes to that
// directory and execs the program, as a direct fork would. Just before the
// exec it writes one NUL to fd 3, which the exec then closes: a NUL and EOF
// is success, a NUL and text the reason it failed (it then exits 127),
// nothing at all a helper that died first. What the server inherits is
// what it would have from the supervisor's fork: the same environment,
// entry for entry, process group, parent-death signal, signal mask and
// ignored signals (the only ones a Go program can have ignored at start,
// SIGHUP and SIGINT, the runtime keeps ignored) and file limit (exec
// restores the one the runtime raised).
func runExecHelper(args []string) int { return execHelper(args, nil) }

// execHelper is runExecHelper, which for the sandbox helper also builds
// the sandbox of plan sb before the chdir and confines itself after it,
// then, instead of the exec, starts the server and serves as its init
// (sandboxPlan.serve, whose report on fd 3 goes on past the exec).
func execHelper(args []string, sb *sandboxPlan) int {
	if len(args) < 3 {
		fmt.Fprintln(os.Stderr, "switchboard exec helper: bad arguments")
		return 2
	}
	syscall.CloseOnExec(3)
	fail := func(err error) int {
		syscall.Write(3, append([]byte{0}, err.Error()...))
		return 127
	}
	envFile := os.NewFile(4, "environment")
	b, err := io.ReadAll(envFile)
	envFile.Close()
	if err != nil {
		return fail(fmt.Errorf("reading the server's environment: %w", err))
	}
	var env []string
	for kv := range bytes.SplitSeq(b, []byte{0}) {
		if len(kv) > 0 {
			env = append(env, string(kv))
		}
	}
	if sb != nil {
		if err := sb.build(env); err != nil {
			return fail(err)
		}
		env = sb.environ(env)
	}
	if dir := args[0]; dir != "" {
		if err := syscall.Chdir(dir); err != nil {
			if sb != nil {
				err = fmt.Errorf("sandbox: its working directory %s: %w (is it among the sandbox's paths?)", dir, err)
			}
			return fail(err)
		}
	}
	if sb != nil {
		if err := sb.confine(); err != nil {
			return fail(err)
		}
		return sb.serve(args[1], args[2:], env)
	}
	syscall.Write(3, []byte{0})
	err = syscall.Exec(args[1], args[2:], env)
	syscall.Write(3, []byte(err.Error()))
	return 127
}

// watchHost notices the host's death by the parent-death signal or the
// parent changing, and ends serve by expiring its read.
func (sv *supState) watchHost(sigs <-chan os.Signal) {
	tick := time.NewTicker(parentPoll)
	defer tick.Stop()
	for {
		select {
		case <-sigs: // Pdeathsig, or anyone asking us to stop: both end everything
		case <-tick.C:
			if os.Getppid() == sv.hostPid {
				continue
			}
		case <-sv.hostGone:
			return
		}
		sv.markHostGone()
		return
	}
}

func (sv *supState) markHostGone() {
	sv.goneOnce.Do(func() {
		close(sv.hostGone)
		sv.conn.SetReadDeadline(time.Now())
	})
}

// serve handles the host's frames until the socket ends: the host died
// (or closed it, which it does only by dying). Spawns go to the spawn
// thread; a kill is handled at once, never behind a slow exec.
func (sv *supState) serve() {
	defer close(sv.spawns)
	defer sv.markHostGone()
	oob := make([]byte, syscall.CmsgSpace(3*4))
	var head [5]byte
	raw, scErr := sv.conn.SyscallConn()
	for {
		// The kind byte alone first: the frame's descriptors arrive with it.
		var n int
		var files []*os.File
		err := scErr
		if err == nil {
			var recvErr error
			err = raw.Read(func(fd uintptr) bool {
				n, files, recvErr = recvFrameHead(int(fd), head[:1], oob)
				return recvErr != syscall.EAGAIN && recvErr != syscall.EINTR
			})
			if err == nil {
				err = recvErr
			}
		}
		if err == nil && n == 0 {
			err = io.EOF
		}
		if err == nil && n == 1 {
			_, err = io.ReadFull(sv.conn, head[1:])
		}
		size := binary.BigEndian.Uint32(head[1:])
		if err == nil && (n != 1 || size > maxFrame) {
			err = errors.New("bad frame")
		}
		var body []byte
		if err == nil {
			body = make([]byte, size)
			_, err = io.ReadFull(sv.conn, body)
		}
		if err != nil {
			closeAll(files)
			return
		}
		switch head[0] {
		case frameSpawn:
			var req spawnReq
			if json.Unmarshal(body, &req) != nil || len(files) != 3 || len(req.Argv) == 0 {
				closeAll(files)
				sv.send(event{ID: req.ID, Err: "supervisor: malformed spawn request"})
				continue
			}
			sv.mu.Lock()
			sv.queued[req.ID] = false
			sv.mu.Unlock()
			select {
			case sv.spawns <- spawnJob{req, files}:
			default: // never block the kill frames behind spawns (an exec may hang)
				sv.mu.Lock()
				delete(sv.queued, req.ID)
				sv.mu.Unlock()
				closeAll(files)
				sv.send(event{ID: req.ID, Err: fmt.Sprintf("supervisor: %d spawns are waiting for an earlier one (is an exec hanging?)", cap(sv.spawns))})
			}
		case frameKill:
			var req killReq
			if json.Unmarshal(body, &req) == nil {
				sv.kill(req.ID)
			}
			closeAll(files)
		default:
			closeAll(files)
		}
	}
}

// recvFrameHead receives a frame's first byte, and the descriptors that
// come with it, already close-on-exec: a server forked at that moment must
// not inherit another server's pipes. Linux receives them so
// (MSG_CMSG_CLOEXEC); elsewhere ForkLock holds forks off until the flag is
// set. fd is non-blocking: EAGAIN means nothing has come yet.
func recvFrameHead(fd int, p, oob []byte) (n int, files []*os.File, err error) {
	unlock := lockForkForRecv()
	defer unlock()
	n, oobn, _, _, err := syscall.Recvmsg(fd, p, oob, recvmsgFlags)
	if err != nil || oobn == 0 {
		return n, nil, err
	}
	files, err = parseRights(oob[:oobn])
	for _, f := range files {
		syscall.CloseOnExec(int(f.Fd()))
	}
	return n, files, err
}

func parseRights(oob []byte) ([]*os.File, error) {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var files []*os.File
	for _, m := range msgs {
		fds, err := syscall.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			files = append(files, os.NewFile(uintptr(fd), "server-stdio"))
		}
	}
	return files, nil
}

// spawn starts one server on this (locked) thread with the host's pipes as
// its stdin, stdout and stderr, then drops our copies of them: the server
// alone must hold them, so that its death is EOF to the host at once and a
// request written after it died fails (EPIPE) instead of vanishing.
//
// A server whose program or directory is on a filesystem that can hang
// (req.Indirect, see mayHang) is started through the exec helper: this
// thread forks and execs our own binary (on a local disk, we assume:
// docs/security.md says what if not), and the helper
// then changes directory and execs the server. Should that exec hang, it
// hangs in the helper, not in our fork, so the spawns queued behind it
// and the rest of the supervisor go on; awaitExec announces the server
// once the exec is done.
func (sv *supState) spawn(req spawnReq, files []*os.File) {
	defer closeAll(files)
	env := make([]string, 0, len(req.Env)+1)
	for _, kv := range req.Env {
		if !bytes.HasPrefix(kv, []byte(TagEnv+"=")) {
			env = append(env, string(kv))
		}
	}
	sv.mu.Lock()
	select {
	case <-sv.hostGone: // shutdown may be under way: no new server
		sv.mu.Unlock()
		return
	default:
	}
	if sv.queued[req.ID] { // the host gave up on it before its turn
		delete(sv.queued, req.ID)
		sv.mu.Unlock()
		return
	}
	sv.seq++
	tag := sv.tagBase + strconv.Itoa(sv.seq)
	sv.spawning, sv.spawnTag = true, tag
	sv.mu.Unlock()
	path := string(req.Path)
	attr := &syscall.ProcAttr{
		Dir:   string(req.Dir),
		Env:   append(env, TagEnv+"="+tag),
		Files: []uintptr{files[0].Fd(), files[1].Fd(), files[2].Fd()},
		Sys:   serverAttr(),
	}
	argv := toStrings(req.Argv)
	var execR *os.File // the helper's report of its exec (see runExecHelper)
	var helperEnds []*os.File
	var sandboxed bool
	var fwd *netForwarder // a sandbox's network forwarder (netproxy_linux.go)
	helperPlan := ""      // the plan the sandbox helper gets
	if req.Sandbox != "" {
		sys, hp, f, err := sandboxSpawn(req.Sandbox)
		if err != nil {
			sv.mu.Lock()
			sv.spawning, sv.spawnTag = false, ""
			clear(sv.early)
			delete(sv.queued, req.ID)
			sv.mu.Unlock()
			sv.send(event{ID: req.ID, Err: fmt.Sprintf("fork/exec %s: %v", req.Path, err)})
			return
		}
		attr.Sys, sandboxed, req.Indirect, fwd, helperPlan = sys, true, true, f, hp
	}
	if req.Indirect {
		// The helper is a Go program: it runs with the supervisor's own
		// environment (and the tag), and gets the server's in a file, so
		// that the server's GO* or loader variables neither configure nor
		// break it.
		r, ends, err := helperFiles(attr.Env)
		if err != nil {
			sv.mu.Lock()
			sv.spawning, sv.spawnTag = false, ""
			clear(sv.early)
			delete(sv.queued, req.ID)
			sv.mu.Unlock()
			sv.send(event{ID: req.ID, Err: fmt.Sprintf("fork/exec %s: the exec helper's files: %v", req.Path, err)})
			fwd.close()
			return
		}
		execR, helperEnds = r, ends
		if sandboxed {
			argv = append([]string{os.Args[0], SandboxHelperArg, helperPlan, attr.Dir, path}, argv...)
		} else {
			argv = append([]string{os.Args[0], ExecHelperArg, attr.Dir, path}, argv...)
		}
		path, attr.Dir = selfExe, "/"
		attr.Env = append(os.Environ(), TagEnv+"="+tag)
		if sandboxed {
			// The sandbox helper outlives the exec, as the server's pid 1:
			// it keeps nothing of ours the server could read.
			attr.Env = helperEnv(tag)
		}
		for _, f := range ends {
			attr.Files = append(attr.Files, f.Fd())
		}
		if fwd != nil {
			attr.Files = append(attr.Files, fwd.child.Fd()) // forwarderFd
		}
	}
	pid, err := syscall.ForkExec(path, argv, attr)
	if err != nil && sandboxed {
		err = sandboxForkError(err)
	}
	closeAll(helperEnds) // the helper's copies alone keep them open, until its exec
	fwd.forked(err == nil, sv.collectIdle)
	slowSpawnForTests(env)
	sv.mu.Lock()
	defer sv.mu.Unlock()
	sv.spawning, sv.spawnTag = false, ""
	early, reaped := sv.early[pid]
	clear(sv.early)
	gaveUp := sv.queued[req.ID]
	delete(sv.queued, req.ID)
	if err != nil {
		if execR != nil {
			execR.Close()
		}
		sv.send(event{ID: req.ID, Err: fmt.Sprintf("fork/exec %s: %v", req.Path, err)})
		return
	}
	select {
	case <-sv.hostGone: // shutdown may have swept already; on macOS nothing else would stop it
		killGroup(pid, syscall.SIGKILL)
		fwd.close()
		if execR != nil {
			execR.Close()
		}
		return
	default:
	}
	s := &supServer{id: req.ID, pid: pid, tag: tag, fwd: fwd, init: sandboxed}
	switch {
	case gaveUp:
		s.failed = true
		killGroup(pid, syscall.SIGKILL)
	case !req.Indirect:
		// Announced before its reaping can be, which is sent under mu too.
		s.announced = true
		sv.send(event{ID: req.ID, Pid: pid})
	}
	if reaped { // it exited, and the reaper took it, before it was registered
		sv.exited(s, early)
	} else {
		sv.servers[pid] = s
	}
	if execR != nil {
		go sv.awaitExec(s, execR, req.Path)
	}
	select {
	case sv.kick <- struct{}{}:
	default:
	}
	// Each spawn leaves garbage (its request, its environment), and long
	// running servers never start a sweep, which would collect it.
	collectGarbage()
}

// awaitExec waits for the exec helper of server s to exec the server (its
// report pipe closes) or to say why it could not, then tells the host as
// spawn would have: the server's pid, or the error a direct exec gives.
// A sandbox helper, which stays as the server's pid 1, says "\x00\x01"
// once the server runs, and the server's wait status (4 bytes) when it
// has ended; the helper's own end is held until then.
func (sv *supState) awaitExec(s *supServer, r *os.File, path []byte) {
	defer r.Close()
	var head [2]byte
	n, _ := io.ReadFull(r, head[:])
	if s.init && n == 2 && head == [2]byte{0, 1} {
		sv.mu.Lock()
		if !s.failed {
			s.announced = true
			sv.send(event{ID: s.id, Pid: s.pid})
		}
		sv.mu.Unlock()
		var b [4]byte
		_, err := io.ReadFull(r, b[:])
		sv.mu.Lock()
		defer sv.mu.Unlock()
		if err == nil {
			ws := syscall.WaitStatus(binary.LittleEndian.Uint32(b[:]))
			s.status = &ws
		}
		s.reported = true
		if s.held != nil {
			sv.reaped(s, *s.held)
		}
		return
	}
	rest, _ := io.ReadAll(io.LimitReader(r, 4<<10))
	msg := append(head[:n], rest...)
	sv.mu.Lock()
	defer sv.mu.Unlock()
	s.reported = true
	switch {
	case s.failed: // the host gave up on it
	case len(msg) == 0: // it died before it got to the exec
		s.failed = true
		sv.send(event{ID: s.id, Err: fmt.Sprintf("fork/exec %s: the exec helper ended before the exec (its stderr is the server's)", path)})
	case len(msg) > 1:
		s.failed = true
		sv.send(event{ID: s.id, Err: fmt.Sprintf("fork/exec %s: %s", path, msg[1:])})
	default:
		s.announced = true
		sv.send(event{ID: s.id, Pid: s.pid})
	}
	if s.held != nil {
		sv.reaped(s, *s.held)
	}
}

// helperEnv is the sandbox helper's environment: its tag, and what a
// test build of this program needs to exit at once.
func helperEnv(tag string) []string {
	env := []string{TagEnv + "=" + tag}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GORACE=") || strings.HasPrefix(kv, "GOCOVERDIR=") {
			env = append(env, kv)
		}
	}
	return env
}

// testHooks is set by this package's tests (TestMain), never otherwise:
// then a server whose environment holds slowSpawnEnv=DURATION makes its
// fork last that much longer, as a hung exec on a slow filesystem would.
var testHooks bool

const slowSpawnEnv = "SWITCHBOARD_PROC_TEST_SLOW_SPAWN"

func slowSpawnForTests(env []string) {
	if !testHooks {
		return
	}
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, slowSpawnEnv+"="); ok {
			d, _ := time.ParseDuration(v)
			time.Sleep(d)
		}
	}
}

func (sv *supState) kill(id uint64) {
	sv.mu.Lock()
	s := sv.ending[id] // its sweep may be waiting out the grace
	for _, live := range sv.servers {
		if live.id == id {
			s = live
		}
	}
	if s != nil {
		s.killNow.Store(true)
		if sv.servers[s.pid] == s {
			killGroup(s.pid, syscall.SIGKILL)
		}
		if !s.announced { // the host gave up waiting for its exec
			s.failed = true
		}
	} else if _, ok := sv.queued[id]; ok {
		sv.queued[id] = true // the host gave up before it was started
	}
	sv.mu.Unlock()
}

// send writes one event line to the host. After the host's death it fails,
// which changes nothing.
func (sv *supState) send(ev event) {
	b, _ := json.Marshal(ev)
	sv.wmu.Lock()
	defer sv.wmu.Unlock()
	sv.conn.Write(append(b, '\n'))
}

// reap waits for every child: a server's exit starts its sweep; anything
// else is an orphan reparented to us, reaped and forgotten, unless a fork
// is under way: then it may be that fork's child, and is kept in early.
//
// An orphan's group, read from it as a zombie before it is reaped, is
// kept for a while in orphanGroups: a process that forks a successor and
// exits over and over is never caught alive by a look at /proc, but each
// of its hops dies as our child, so its group is known, and shutdown
// signals that group as a whole.
//
// No wait blocks: each is WNOHANG, and SIGCHLD says when to look again.
// Under Go 1.26 a goroutine entering a blocking system call just as a
// garbage collection stops the world can hold the whole process for a
// minute (see jsonl.Stdin), and a supervisor held so starts no server.
func (sv *supState) reap() {
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)
	for {
		var ws syscall.WaitStatus
		pid, group, err := peekExited()
		if err == nil && pid == 0 {
			<-chld // none has exited yet
			continue
		}
		if err == nil {
			peeked := pid > 0 // macOS does not peek: pid -1, any child
			if pid, err = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); err == syscall.ECHILD && peeked {
				// Reaped by another between the two: ForkExec reaps the
				// child of an exec that failed. We have children still.
				continue
			}
			if err == nil && pid == 0 {
				<-chld // macOS: none has exited yet
				continue
			}
		}
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.ECHILD:
			<-sv.kick
			continue
		case err != nil:
			time.Sleep(10 * time.Millisecond)
			continue
		}
		sv.mu.Lock()
		if s := sv.servers[pid]; s != nil {
			delete(sv.servers, pid)
			sv.exited(s, ws)
		} else {
			if group.group > 1 && group.group != pid {
				sv.noteOrphanGroup(group)
			}
			if sv.spawning {
				sv.early[pid] = ws
			}
		}
		sv.mu.Unlock()
	}
}

// orphanGroup is a process group seen on an orphan's exit, and the
// session it was in.
type orphanGroup struct{ group, session int }

// orphanGroupTTL is how long a group seen on an orphan's exit counts as
// one of ours. A group that hops keeps renewing it; one that ended stops.
// Its id could name another group by then only after the pids wrapped;
// leftovers checks the session too.
const orphanGroupTTL = time.Second

// noteOrphanGroup records group, seen on an orphan's exit. Called under mu.
func (sv *supState) noteOrphanGroup(group orphanGroup) {
	now := time.Now()
	if len(sv.orphanGroups) >= 1024 {
		for g, seen := range sv.orphanGroups {
			if now.Sub(seen) > orphanGroupTTL {
				delete(sv.orphanGroups, g)
			}
		}
		if len(sv.orphanGroups) >= 1024 {
			return
		}
	}
	sv.orphanGroups[group] = now
}

// recentOrphanGroups lists the groups seen on orphans' exits lately.
// Called under mu.
func (sv *supState) recentOrphanGroups() []orphanGroup {
	var out []orphanGroup
	now := time.Now()
	for g, seen := range sv.orphanGroups {
		if now.Sub(seen) > orphanGroupTTL {
			delete(sv.orphanGroups, g)
			continue
		}
		out = append(out, g)
	}
	return out
}

// exited handles the reaping of server s, unless the host is still to hear
// of its start (awaitExec does it then). Called under mu.
func (sv *supState) exited(s *supServer, ws syscall.WaitStatus) {
	if !s.announced && !s.failed || s.init && !s.reported {
		s.held = &ws
		return
	}
	sv.reaped(s, ws)
}

// reaped records that server s was reaped, tells the host (its pid is free
// for reuse from now on) and sweeps what it left. Called under mu.
func (sv *supState) reaped(s *supServer, ws syscall.WaitStatus) {
	sv.ending[s.id] = s
	sv.reaps++
	s.reapSeq = sv.reaps
	if s.status != nil { // a sandbox helper's: the server's own
		ws = *s.status
	}
	if s.announced {
		sv.send(event{ID: s.id, Reaped: true, Status: uint32(ws)})
	}
	go sv.finish(s, ws)
}

// finish sweeps what server s left, then reports that it is done. Its
// group outlives it while it has members, and keeps its id reserved until
// then, so the group signals reach exactly those members.
func (sv *supState) finish(s *supServer, ws syscall.WaitStatus) {
	sv.sweep(s, func(owner string) bool {
		// Its own orphans, and those of servers already gone.
		return owner == s.tag || owner != "" && sv.ours(owner) && !sv.liveTag(owner)
	}, s.reapSeq, leftoverGrace)
	s.fwd.close()
	sv.mu.Lock()
	if s.announced { // under mu: announced only there
		sv.send(event{ID: s.id, Done: true, Status: uint32(ws)})
	}
	delete(sv.ending, s.id)
	idle := len(sv.servers) == 0 && len(sv.ending) == 0
	if !sv.spawning {
		collectGarbage()
	}
	sv.mu.Unlock()
	if idle {
		// No server is left to own an untagged orphan (one that cleared
		// its environment): it is a leftover of one that is gone.
		// It stands down once a server runs again, which may own one.
		sv.sweep(nil, func(owner string) bool {
			return len(sv.servers) == 0 && !sv.liveTag(owner)
		}, 0, leftoverGrace)
	}
}

// A fork on Linux is a vfork: the forking thread waits, in the kernel and
// holding its P, until the child has exec'd, which an exec on a hung
// network mount can make last for ever. With one P, or during a garbage
// collection (whose stop-the-world waits for every P), the whole
// supervisor would stop with it: no reaping, no sweeps, no shutdown when
// the host dies. So the supervisor runs with two Ps, and its collector
// runs only when collectGarbage calls it, under mu and never while a fork
// is under way (spawning, set under mu before the fork), between a sweep's
// steps and after it. supervisorMemoryLimit is the safety net should
// garbage pile up regardless; it is high because reaching it during a
// hung fork would stop the supervisor (sweeps slow down meanwhile, see
// sweep, to make little garbage).
const (
	supervisorMemoryLimit = 1 << 30
	collectAbove          = 8 << 20 // heap bytes that make collectGarbage collect
)

var heapSample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}

// collectGarbage collects if the heap has grown past collectAbove. Called
// under mu, when no fork is under way.
func collectGarbage() {
	metrics.Read(heapSample)
	if heapSample[0].Value.Kind() == metrics.KindUint64 && heapSample[0].Value.Uint64() > collectAbove {
		runtime.GC()
	}
}

// ours reports whether tag was given by this supervisor.
func (sv *supState) ours(tag string) bool { return strings.HasPrefix(tag, sv.tagBase) }

// liveTag reports whether tag is a live server's, counting a fork under
// way: its child is untagged ("") until it execs, then has spawnTag.
// Called under mu.
func (sv *supState) liveTag(tag string) bool {
	if sv.spawning && (tag == "" || tag == sv.spawnTag) {
		return true
	}
	for _, s := range sv.servers {
		if s.tag == tag {
			return true
		}
	}
	return false
}

// sweep kills what server s left (its group, while it has members) and
// the orphans below us that owned says are to go (see leftovers); with s
// nil, only orphans, and with owned nil too, every process below us. Each
// gets SIGTERM once, then SIGKILL after grace (at once once the host asks
// to kill s); sweep gives up after sweepLimit more. Its first look may
// reuse a view of the orphans taken after since reaps (0: a fresh one).
func (sv *supState) sweep(s *supServer, owned func(owner string) bool, since uint64, grace time.Duration) {
	termBy := time.Now().Add(grace)
	giveUp := termBy.Add(sweepLimit)
	termed := map[int]bool{}
	for {
		t := time.Now()
		if s != nil && s.killNow.Load() && t.Before(termBy) {
			termBy = t
			giveUp = termBy.Add(sweepLimit)
		}
		sv.mu.Lock()
		pgid := 0
		if s != nil && !s.groupGone.Load() {
			if groupGone(s.pid) {
				s.groupGone.Store(true)
			} else {
				pgid = s.pid
			}
		}
		left, complete := sv.leftovers(pgid, owned, since)
		for _, pid := range left {
			switch {
			case !t.Before(termBy):
				syscall.Kill(pid, syscall.SIGKILL)
			case !termed[pid]:
				termed[pid] = true
				syscall.Kill(pid, syscall.SIGTERM)
			}
		}
		forking := sv.spawning
		if !forking {
			collectGarbage()
		}
		sv.mu.Unlock()
		since = 0
		if len(left) == 0 && complete || t.After(giveUp) {
			return
		}
		if forking {
			time.Sleep(100 * time.Millisecond) // little garbage: it cannot be collected now
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// shutdown runs once the host is gone: SIGTERM to every server's group,
// also of those whose leftovers are being swept, SIGKILL after
// hostGoneGrace, then every process left below us goes.
func (sv *supState) shutdown() {
	signalAll := func(sig syscall.Signal) int {
		sv.mu.Lock()
		defer sv.mu.Unlock()
		for _, s := range sv.servers {
			killGroup(s.pid, sig)
		}
		for _, s := range sv.ending {
			if !s.groupGone.Load() && !groupGone(s.pid) {
				killGroup(s.pid, sig)
			}
		}
		return len(sv.servers) + len(sv.ending)
	}
	signalAll(syscall.SIGTERM)
	for deadline := time.Now().Add(hostGoneGrace); time.Now().Before(deadline); {
		if signalAll(0) == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	signalAll(syscall.SIGKILL)
	sv.sweep(nil, nil, 0, leftoverGrace) // everything below us
	// A fork under way ends in spawn, which kills its child now that the
	// host is gone (on Linux its Pdeathsig would too, once we exit).
	for deadline := time.Now().Add(hostGoneGrace); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		sv.mu.Lock()
		forking := sv.spawning
		sv.mu.Unlock()
		if !forking {
			break
		}
	}
}
