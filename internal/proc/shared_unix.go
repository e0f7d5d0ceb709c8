//go:build linux || darwin

package proc

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The host's end of the shared supervisor. One supervisor serves every
// supervised server of a host process: the first supervised Start launches
// it, and the next Start after it died launches another.
//
// The two talk over a Unix stream socket. The host sends frames: one kind
// byte (the server's three std pipes ride on it as SCM_RIGHTS for a spawn),
// a big-endian uint32 length and that much JSON. The supervisor answers
// with JSON lines (event): a spawn's outcome, the server's reaping, and the
// end of the sweep of what it left. See runSupervisor for the other end.

// pendingSpawn is a Start waiting for the supervisor's answer.
type pendingSpawn struct {
	p  *Process
	ch chan event
}

type supervisor struct {
	cmd     *exec.Cmd
	tagBase string // of its servers' tags (newTagBase)
	conn    *net.UnixConn
	stderr  *ring // the supervisor's own diagnostics, for error messages

	wmu     sync.Mutex  // one frame at a time
	retired atomic.Bool // a write failed: never used again (see send)

	mu      sync.Mutex
	nextID  uint64
	pending map[uint64]pendingSpawn // spawns awaiting their outcome
	procs   map[uint64]*Process     // started servers, by spawn ID, until Done
	dead    error                   // why the connection ended; nil while it lives
	gone    chan struct{}           // closed once dead is set
}

var (
	supMu  sync.Mutex
	shared *supervisor
)

// errSupervisorGone is the exit error of a server whose supervisor died
// first: the server was killed with it, and its real status is unknown.
var errSupervisorGone = errors.New("the supervisor exited, so the server was killed")

// sharedSupervisor returns the host's supervisor, launching it if there is
// none or the last one died; fresh says it was launched now.
func sharedSupervisor(path string, args []string) (s *supervisor, fresh bool, err error) {
	supMu.Lock()
	defer supMu.Unlock()
	if s := shared; s != nil {
		s.mu.Lock()
		alive := s.dead == nil && !s.retired.Load()
		s.mu.Unlock()
		if alive {
			return s, false, nil
		}
	}
	s, err = launchSupervisor(path, args)
	if err != nil {
		return nil, false, err
	}
	shared = s
	return s, true, nil
}

func launchSupervisor(path string, args []string) (*supervisor, error) {
	hostEnd, supEnd, err := socketPair()
	if err != nil {
		return nil, fmt.Errorf("supervisor socket: %w", err)
	}
	defer supEnd.Close()
	c, err := net.FileConn(hostEnd)
	hostEnd.Close()
	if err != nil {
		return nil, fmt.Errorf("supervisor socket: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		c.Close()
		return nil, err
	}
	s := &supervisor{
		conn:    c.(*net.UnixConn),
		stderr:  newRing(4 << 10),
		pending: map[uint64]pendingSpawn{},
		procs:   map[uint64]*Process{},
		gone:    make(chan struct{}),
	}
	s.tagBase = newTagBase()
	s.cmd = exec.Command(path, append(append([]string{}, args...), strconv.Itoa(os.Getpid()), s.tagBase)...)
	if path == selfExeLink {
		s.cmd.Args[0] = os.Args[0] // what ps shows
	}
	s.cmd.Env = supervisorEnv()
	s.cmd.Dir = "/" // pins no directory of the user's
	s.cmd.Stderr = errW
	s.cmd.ExtraFiles = []*os.File{supEnd} // fd 3
	// A session of its own: everything in it, and in any session made
	// below it, is ours, so a process group there can be signalled as a
	// whole without hitting the user's shell or another job (a process may
	// join any group of its session, never one of another). Servers thus
	// have no controlling terminal (in a background group, reading it would
	// only have stopped them), and a terminal's Ctrl-C or hangup reaches
	// only the host.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	setPdeathsig(s.cmd.SysProcAttr, true)
	err = startCmd(s.cmd)
	errW.Close()
	if err != nil {
		errR.Close()
		c.Close()
		return nil, fmt.Errorf("starting the supervisor: %w", err)
	}
	stderrDone := make(chan struct{})
	go func() {
		defer close(stderrDone)
		defer errR.Close()
		s.stderr.drain(errR, 1024)
	}()
	go s.read(stderrDone)
	return s, nil
}

// supervisorEnv is the supervisor's own environment: nothing of the host's
// (it is our code and needs no PATH: the host resolves every command) but
// its temporary directory, two Ps (see collectGarbage), and GORACE so that a race-enabled test binary
// does not sleep at exit.
func supervisorEnv() []string {
	env := []string{"GOMAXPROCS=2", "TMPDIR=" + os.TempDir()} // TMPDIR: see helperFiles
	if v, ok := os.LookupEnv("GORACE"); ok {
		env = append(env, "GORACE="+v)
	}
	return env
}

// read dispatches the supervisor's events until the connection ends, then
// fails everything that still depends on it.
func (s *supervisor) read(stderrDone <-chan struct{}) {
	r := bufio.NewReader(s.conn)
	var err error
	for {
		var line []byte
		line, err = r.ReadBytes('\n')
		if err != nil {
			break
		}
		var ev event
		if json.Unmarshal(line, &ev) != nil {
			err = fmt.Errorf("supervisor said %q", strings.TrimSpace(string(line)))
			break
		}
		s.dispatch(ev)
	}
	s.conn.Close()
	s.cmd.Wait()
	t := time.NewTimer(time.Second)
	select { // its last words, if any
	case <-stderrDone:
	case <-t.C:
	}
	t.Stop()
	s.fail(err)
}

func (s *supervisor) dispatch(ev event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.procs[ev.ID]; p != nil && (ev.Reaped || ev.Done) {
		if ev.Reaped {
			// Its pid is free for reuse from now on: no more group signals.
			p.mu.Lock()
			p.exited = true
			p.reapedErr = exitError(syscall.WaitStatus(ev.Status))
			p.mu.Unlock()
		}
		if ev.Done {
			delete(s.procs, ev.ID)
			p.exitCh <- exitError(syscall.WaitStatus(ev.Status))
		}
		return
	}
	ps, ok := s.pending[ev.ID]
	delete(s.pending, ev.ID)
	switch {
	case !ok && ev.Pid > 1: // Start gave up waiting: nobody would close this server
		// Sent from another goroutine: the event reader never waits on a
		// write to the supervisor, which may be waiting for it to read.
		go s.send(frameKill, killReq{ID: ev.ID})
		killGroup(ev.Pid, syscall.SIGKILL)
	case !ok:
	case ev.Pid > 1:
		// Registered here, before the next line is read: the server's exit
		// may be that line.
		s.procs[ev.ID] = ps.p
		ps.p.mu.Lock()
		ps.p.pid = ev.Pid
		ps.p.mu.Unlock()
		ps.ch <- ev
	default:
		ps.ch <- ev
	}
}

// fail ends every spawn and server that depended on a supervisor that is
// gone. Its servers had Pdeathsig=SIGKILL; their groups get one too.
func (s *supervisor) fail(err error) {
	msg := "the supervisor exited"
	if err != nil && !errors.Is(err, net.ErrClosed) && !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
		msg = fmt.Sprintf("the supervisor failed: %v", err)
	}
	if st := s.cmd.ProcessState; st != nil && !st.Success() {
		msg += " (" + st.String() + ")"
	}
	if tail := s.stderr.tail(3); len(tail) > 0 {
		msg += "; its stderr: " + strings.Join(tail, " | ")
	}
	s.mu.Lock()
	s.dead = errors.New(msg)
	pending, procs := s.pending, s.procs
	s.pending, s.procs = nil, nil
	s.mu.Unlock()
	close(s.gone)
	for _, ps := range pending {
		ps.ch <- event{Err: msg, lost: true}
	}
	// Its servers died with it (Pdeathsig); what they left in their groups
	// or escaped from them, reparented to init now, carries their tags.
	killTagged(s.tagBase)
	for _, p := range procs {
		p.mu.Lock()
		exitErr := errSupervisorGone
		if p.exited { // reaped: its status is known, its leftovers were being swept
			exitErr = p.reapedErr
			if !groupGone(p.pid) {
				killGroup(p.pid, syscall.SIGKILL)
			}
		} else {
			killGroup(p.pid, syscall.SIGKILL)
		}
		p.mu.Unlock()
		p.exitCh <- exitErr
	}
}

// send writes one frame. files, if any, ride on its first byte.
func (s *supervisor) send(kind byte, v any, files ...*os.File) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if len(body) > maxFrame {
		// The supervisor would take it for a broken host and stop every
		// server; exec would refuse it anyway (E2BIG).
		return fmt.Errorf("%w (%d MiB)", errTooLarge, len(body)>>20)
	}
	frame := make([]byte, 5, 5+len(body))
	frame[0] = kind
	binary.BigEndian.PutUint32(frame[1:], uint32(len(body)))
	frame = append(frame, body...)
	var oob []byte
	if len(files) > 0 {
		fds := make([]int, len(files))
		for i, f := range files {
			fds[i] = int(f.Fd())
		}
		oob = syscall.UnixRights(fds...)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	// Bounded: a supervisor that stopped reading must not hold a Close
	// (signal writes under p.mu) or a Start for ever. A frame that failed
	// may be half written, and the stream cannot be resynchronised: the
	// supervisor is retired. It is killed (a stopped one could not read
	// the socket's end), which takes its servers with it; read sees the
	// end and fails what waits on it (what they left is killed by tag),
	// and the next Start launches a new one.
	s.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	n, _, err := s.conn.WriteMsgUnix(frame, oob, nil)
	if err == nil && n < len(frame) {
		_, err = s.conn.Write(frame[n:])
	}
	if err != nil && !s.retired.Swap(true) {
		s.conn.Close()
		s.kill()
	}
	return err
}

// errTooLarge refuses a spawn whose arguments and environment make a frame
// larger than the supervisor reads.
var errTooLarge = errors.New("its arguments and environment are too large to start")

// writeTimeout bounds one frame's write to the supervisor, which reads
// them at once unless it is stopped or wedged.
const writeTimeout = 5 * time.Second

// startSupervised asks the shared supervisor to start the server req
// describes with p's pipes, whose child ends are childEnds (closed here
// either way). retry reports that a supervisor found alive died before it
// answered: the request was lost with it, and a new Start with new pipes
// will launch a new one.
func startSupervised(p *Process, supPath string, supArgs []string, req spawnReq, childEnds []*os.File) (pid int, err error, retry bool) {
	defer closeAll(childEnds)
	s, fresh, err := sharedSupervisor(supPath, supArgs)
	if err != nil {
		return 0, err, false
	}
	pid, err, lost := s.spawn(p, req, childEnds)
	return pid, err, lost && !fresh
}

// spawn asks s for one server. lost reports that s died before it
// answered.
func (s *supervisor) spawn(p *Process, req spawnReq, childEnds []*os.File) (pid int, err error, lost bool) {
	ch := make(chan event, 1)
	s.mu.Lock()
	if s.dead != nil {
		err := s.dead
		s.mu.Unlock()
		return 0, err, true
	}
	s.nextID++
	req.ID = s.nextID
	s.pending[req.ID] = pendingSpawn{p, ch}
	p.sys.sup, p.sys.id = s, req.ID
	s.mu.Unlock()
	if err := s.send(frameSpawn, req, childEnds...); err != nil {
		s.forget(req.ID)
		if errors.Is(err, errTooLarge) { // nothing was sent
			return 0, err, false
		}
		// The send retired s: a new Start may use a new one.
		t := time.NewTimer(killWait)
		defer t.Stop()
		select {
		case <-s.gone: // it died: say why rather than "broken pipe"
			s.mu.Lock()
			defer s.mu.Unlock()
			return 0, s.dead, true
		case <-t.C:
			return 0, fmt.Errorf("asking the supervisor: %w", err), true
		}
	}
	closeAll(childEnds) // the server alone must hold them: its exit is EOF at once
	t := time.NewTimer(supervisorStartTimeout)
	defer t.Stop()
	var ev event
	select {
	case ev = <-ch:
	case <-t.C:
		s.forget(req.ID)
		select {
		case ev = <-ch: // answered just in time
		default:
			// Its exec may hang on a dead mount: what waits in it must go,
			// not live on to exec a server nobody would stop.
			s.send(frameKill, killReq{ID: req.ID})
			return 0, fmt.Errorf("supervisor did not report within %v", supervisorStartTimeout), false
		}
	}
	if ev.Err != "" {
		return 0, errors.New(ev.Err), ev.lost
	}
	return ev.Pid, nil, false
}

// kill is the last resort against a supervisor that no longer answers: it
// takes every server of this host down with it (their Pdeathsig), and the
// next Start launches a new one.
func (s *supervisor) kill() { s.cmd.Process.Kill() }

// forget drops a spawn nobody waits for any more; dispatch kills the server
// if it starts after all.
func (s *supervisor) forget(id uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending != nil {
		delete(s.pending, id)
	}
}
