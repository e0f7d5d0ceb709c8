//go:build linux || darwin

package proc

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime"
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
	pid     int
	tag     string
	reapSeq uint64      // sv.reaps once it was reaped
	killNow atomic.Bool // the host sent SIGKILL: no grace for leftovers
}

// orphanView is one look at the orphans below us (our children that are
// not servers) with their tags, taken under mu once reaps servers had been
// reaped. When many servers exit at once, one look serves them all.
type orphanView struct {
	reaps uint64
	tags  []string
	ok    bool // false: the kernel could not list our children
}

// supState is the supervisor's state. mu guards servers (live, not yet
// reaped) and is held while a sweep looks at the tree, so that a server
// started meanwhile is never taken for a leftover.
type supState struct {
	conn    *net.UnixConn
	hostPid int
	tagBase string

	wmu sync.Mutex // one event line at a time

	mu      sync.Mutex
	seq     int
	servers map[int]*supServer
	ending  map[int]*supServer // reaped, their sweep not finished
	reaps   uint64
	orphans *orphanView // the last look, nil before the first

	kick     chan struct{} // a server was started: the reaper may wait again
	hostGone chan struct{}
	goneOnce sync.Once
}

// runSupervisor implements the supervisor mode. args are HOSTPID; fd 3 is
// the socket to the host. It starts every supervised server of that host,
// reaps them and what they leave, and when the host dies stops them all.
func runSupervisor(args []string) int {
	// Servers get Pdeathsig=SIGKILL, which belongs to the thread that forks
	// them: this one, which spawns them all and lives as long as we do.
	runtime.LockOSThread()
	hostPid := 0
	if len(args) == 1 {
		hostPid, _ = strconv.Atoi(args[0])
	}
	if hostPid <= 0 {
		fmt.Fprintln(os.Stderr, "switchboard supervisor: bad arguments")
		return 2
	}
	syscall.CloseOnExec(3) // the socket is not the servers'
	f := os.NewFile(3, "control")
	c, err := net.FileConn(f)
	f.Close()
	uc, ok := c.(*net.UnixConn)
	if err != nil || !ok {
		fmt.Fprintf(os.Stderr, "switchboard supervisor: fd 3 is not the host's socket: %v\n", err)
		return 2
	}
	sv := &supState{
		conn:     uc,
		hostPid:  hostPid,
		tagBase:  strconv.Itoa(os.Getpid()) + ".",
		servers:  map[int]*supServer{},
		ending:   map[int]*supServer{},
		kick:     make(chan struct{}, 1),
		hostGone: make(chan struct{}),
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT) // not SIGHUP: one ignored (nohup) stays ignored in the servers
	if err := becomeSubreaper(); err != nil {
		fmt.Fprintf(os.Stderr, "switchboard supervisor: %v\n", err)
	}
	if os.Getppid() != hostPid {
		return 1 // the host died before we could serve it
	}
	go sv.reap()
	go sv.watchHost(sigs)
	sv.serve()
	sv.shutdown()
	return 0
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
// (or closed it, which it does only by dying).
func (sv *supState) serve() {
	defer sv.markHostGone()
	oob := make([]byte, syscall.CmsgSpace(3*4))
	var head [5]byte
	for {
		// The kind byte alone first: the frame's descriptors arrive with it.
		n, oobn, _, _, err := sv.conn.ReadMsgUnix(head[:1], oob)
		var files []*os.File
		if err == nil && oobn > 0 {
			files, err = parseRights(oob[:oobn])
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
			if json.Unmarshal(body, &req) != nil || len(files) != 3 {
				closeAll(files)
				sv.send(event{ID: req.ID, Err: "supervisor: malformed spawn request"})
				continue
			}
			sv.spawn(req, files)
		case frameKill:
			var req killReq
			if json.Unmarshal(body, &req) == nil {
				sv.kill(req.Pid)
			}
			closeAll(files)
		default:
			closeAll(files)
		}
	}
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
func (sv *supState) spawn(req spawnReq, files []*os.File) {
	defer closeAll(files)
	env := make([]string, 0, len(req.Env)+1)
	for _, kv := range req.Env {
		if !strings.HasPrefix(kv, TagEnv+"=") {
			env = append(env, kv)
		}
	}
	sv.mu.Lock()
	defer sv.mu.Unlock()
	sv.seq++
	tag := sv.tagBase + strconv.Itoa(sv.seq)
	pid, err := syscall.ForkExec(req.Path, req.Argv, &syscall.ProcAttr{
		Dir:   req.Dir,
		Env:   append(env, TagEnv+"="+tag),
		Files: []uintptr{files[0].Fd(), files[1].Fd(), files[2].Fd()},
		Sys:   serverAttr(),
	})
	if err != nil {
		sv.send(event{ID: req.ID, Err: fmt.Sprintf("fork/exec %s: %v", req.Path, err)})
		return
	}
	// Registered before the reaper can look it up (it takes mu), and
	// announced before its exit can be (the exit is sent after a reap).
	sv.servers[pid] = &supServer{pid: pid, tag: tag}
	sv.send(event{ID: req.ID, Pid: pid})
	select {
	case sv.kick <- struct{}{}:
	default:
	}
}

func (sv *supState) kill(pid int) {
	sv.mu.Lock()
	s := sv.servers[pid]
	if s == nil {
		s = sv.ending[pid] // its sweep may be waiting out the grace
	}
	sv.mu.Unlock()
	if s != nil {
		s.killNow.Store(true)
		killGroup(pid, syscall.SIGKILL)
	}
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
// else is an orphan reparented to us, reaped and forgotten.
func (sv *supState) reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
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
		s := sv.servers[pid]
		if s != nil {
			delete(sv.servers, pid)
			sv.ending[pid] = s
			sv.reaps++
			s.reapSeq = sv.reaps
		}
		sv.mu.Unlock()
		if s != nil {
			go sv.finish(s, ws)
		}
	}
}

// finish sweeps what server s left, then reports its exit. The reaped
// leader no longer holds its group id, but a group with members left
// keeps it, so the group signals reach exactly those members.
func (sv *supState) finish(s *supServer, ws syscall.WaitStatus) {
	sv.sweep(s.pid, func(owner string) bool {
		// Its own orphans, and those of servers already gone.
		return owner == s.tag || sv.ours(owner) && !sv.liveTag(owner)
	}, s.reapSeq, leftoverGrace, &s.killNow)
	sv.send(event{Exit: s.pid, Status: uint32(ws)})
	sv.mu.Lock()
	delete(sv.ending, s.pid)
	idle := len(sv.servers) == 0 && len(sv.ending) == 0
	sv.mu.Unlock()
	if idle {
		// No server is left to own an untagged orphan (one that cleared
		// its environment): it is a leftover of one that is gone.
		sv.sweep(0, func(owner string) bool { return !sv.liveTag(owner) }, 0, leftoverGrace, nil)
	}
}

// ours reports whether tag was given by this supervisor.
func (sv *supState) ours(tag string) bool { return strings.HasPrefix(tag, sv.tagBase) }

// liveTag reports whether tag is a live server's. Called under mu.
func (sv *supState) liveTag(tag string) bool {
	for _, s := range sv.servers {
		if s.tag == tag {
			return true
		}
	}
	return false
}

// sweep kills group pgid (if > 1) and the orphans below us that owned
// says are to go (see leftovers); with owned nil, every process below us.
// Each gets SIGTERM once, then SIGKILL after grace (at once if now is set);
// sweep gives up after sweepLimit more. Its first look may reuse a view of
// the orphans taken after since reaps (0: a fresh one).
func (sv *supState) sweep(pgid int, owned func(owner string) bool, since uint64, grace time.Duration, now *atomic.Bool) {
	termBy := time.Now().Add(grace)
	giveUp := termBy.Add(sweepLimit)
	termed := map[int]bool{}
	for {
		t := time.Now()
		if now != nil && now.Load() && t.Before(termBy) {
			termBy = t
			giveUp = termBy.Add(sweepLimit)
		}
		sv.mu.Lock()
		left := sv.leftovers(pgid, owned, since)
		since = 0
		for _, pid := range left {
			switch {
			case !t.Before(termBy):
				syscall.Kill(pid, syscall.SIGKILL)
			case !termed[pid]:
				termed[pid] = true
				syscall.Kill(pid, syscall.SIGTERM)
			}
		}
		sv.mu.Unlock()
		if len(left) == 0 || t.After(giveUp) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// shutdown runs once the host is gone: SIGTERM to every server's group,
// SIGKILL after hostGoneGrace, then every process left below us goes.
func (sv *supState) shutdown() {
	signalAll := func(sig syscall.Signal) int {
		sv.mu.Lock()
		defer sv.mu.Unlock()
		for pid := range sv.servers {
			killGroup(pid, sig)
		}
		return len(sv.servers)
	}
	signalAll(syscall.SIGTERM)
	for deadline := time.Now().Add(hostGoneGrace); time.Now().Before(deadline); {
		sv.mu.Lock()
		n := len(sv.servers)
		sv.mu.Unlock()
		if n == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	signalAll(syscall.SIGKILL)
	sv.sweep(0, nil, 0, leftoverGrace, nil) // nil: everything below us
}
