package proc

import (
	"encoding/binary"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// forwardedSignals are the signals the sandbox helper, pid 1 of the
// server's pid namespace, passes on to the server's process group. The
// supervisor signals the helper's group, which holds the helper alone; as
// pid 1 it would otherwise ignore every signal but SIGKILL.
var forwardedSignals = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}

// serve is the sandbox helper's life once the view is built and it is
// confined (Landlock, no capability, no_new_privs: the server inherits all
// of it): it starts the server as its child, in a process group of its
// own, then tells the supervisor on fd 3 ("\x00\x01"; "\x00" and the
// reason if the exec failed). It stays as the pid namespace's init:
// forwarding signals, reaping whatever is reparented to it, and, once the
// server has exited, sending SIGTERM to what is left and, after
// leftoverGrace, exiting, which makes the kernel SIGKILL the rest. Its
// last words on fd 3 are the server's wait status (4 bytes), which the
// supervisor reports as the server's; its own exit status says the same
// as far as an exit status can.
func (p *sandboxPlan) serve(path string, argv, env []string) int {
	// Not readable by the server through /proc/1 (its environment is the
	// supervisor's, its descriptors the supervisor's pipe), nor open to
	// ptrace: that takes a capability the server does not have.
	unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	// SIGCHLD says when to wait again: no wait below blocks (see waitAny).
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)
	sigs := make(chan os.Signal, 16)
	for _, s := range forwardedSignals {
		// One ignored from the start (nohup) stays so for the server.
		if !signal.Ignored(s) {
			signal.Notify(sigs, s)
		}
	}
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Env:   env,
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
	if err != nil {
		syscall.Write(3, append([]byte{0}, err.Error()...))
		return 127
	}
	syscall.Write(3, []byte{0, 1})
	// The server alone holds its pipes: its exit is EOF to the host.
	if null, err := unix.Open("/dev/null", unix.O_RDWR|unix.O_CLOEXEC, 0); err == nil {
		for fd := range 3 {
			unix.Dup3(null, fd, 0)
		}
		unix.Close(null)
	}
	go func() {
		for s := range sigs {
			syscall.Kill(-pid, s.(syscall.Signal))
		}
	}()
	var status syscall.WaitStatus
	for {
		var ws syscall.WaitStatus
		got, err := waitAny(chld, &ws)
		if err == syscall.EINTR {
			continue
		}
		if err != nil { // ECHILD: cannot be before the server's end
			return 127
		}
		if got == pid {
			status = ws
			break
		}
	}
	var once sync.Once
	end := func() {
		once.Do(func() {
			var b [4]byte
			binary.LittleEndian.PutUint32(b[:], uint32(status))
			syscall.Write(3, b[:])
			os.Exit(exitCodeOf(status))
		})
	}
	// What the server left: SIGTERM now, SIGKILL by the kernel when we
	// exit, once it is all gone or after the grace.
	syscall.Kill(-1, syscall.SIGTERM)
	time.AfterFunc(leftoverGrace, end)
	for {
		var ws syscall.WaitStatus
		if _, err := waitAny(chld, &ws); err == syscall.ECHILD {
			break
		}
	}
	end()
	return 0
}

// waitAny reaps any child, waiting for one to exit, without a blocking
// wait4: WNOHANG, and then chld (notified of SIGCHLD) says when to look
// again. Under Go 1.26 a goroutine entering a blocking system call just
// as a garbage collection stops the world can hold the whole process for
// a minute (see jsonl.Stdin); here that would hold the signals forwarded
// to the server.
func waitAny(chld <-chan os.Signal, ws *syscall.WaitStatus) (int, error) {
	for {
		pid, err := syscall.Wait4(-1, ws, syscall.WNOHANG, nil)
		if err != nil || pid != 0 {
			return pid, err
		}
		<-chld
	}
}

// exitCodeOf is the exit status that says what ws says: its code, or 128
// and the signal that killed it, as a shell puts it.
func exitCodeOf(ws syscall.WaitStatus) int {
	switch {
	case ws.Exited():
		return ws.ExitStatus()
	case ws.Signaled():
		return 128 + int(ws.Signal())
	}
	return 127
}

// swapTestEnv, in a server's environment under this package's tests
// (testHooks), names a link to replace ("LINK=TARGET") once the sandbox
// helper has opened what it binds and before it mounts anything: the swap
// an attacker makes between the check and the mount.
const swapTestEnv = "SWITCHBOARD_PROC_TEST_SWAP"

func swapForTests(env []string) {
	if !testHooks {
		return
	}
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, swapTestEnv+"="); ok {
			link, target, _ := strings.Cut(v, "=")
			os.Rename(link, link+".swapped")
			os.Symlink(target, link)
		}
	}
}
