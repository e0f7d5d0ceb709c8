package proc

import (
	"errors"
	"os"
	"strconv"
	"syscall"
)

// macOS has no child subreaper: a descendant that leaves the server's
// process group and is orphaned goes to launchd, out of our reach.
func becomeSubreaper() error { return nil }

// mayHang is false on macOS: no server goes through the exec helper there.
// A fork is not a vfork, so an exec hanging on a network mount holds up
// the spawns queued behind it, but not the rest of the supervisor.
func mayHang(string) bool { return false }

// peekExited leaves the wait to the caller (pid -1: any child); macOS has
// no subreaper, so no orphan is ever ours to look at.
func peekExited() (pid int, group orphanGroup, err error) { return -1, orphanGroup{}, nil }

// closeOnExecFrom marks every descriptor from first on close-on-exec:
// those /dev/fd lists (the runtime has already raised the soft limit to
// kern.maxfilesperproc, so a loop up to it is long), else every number up
// to the soft limit or 4096.
func closeOnExecFrom(first int) {
	if ents, err := os.ReadDir("/dev/fd"); err == nil {
		for _, e := range ents {
			if fd, err := strconv.Atoi(e.Name()); err == nil && fd >= first {
				syscall.CloseOnExec(fd)
			}
		}
		return
	}
	var lim syscall.Rlimit
	max := 1 << 12
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil && lim.Cur < 1<<16 {
		max = int(lim.Cur)
	}
	for fd := first; fd < max; fd++ {
		syscall.CloseOnExec(fd) // EBADF for the unused ones
	}
}

// macOS has no MSG_CMSG_CLOEXEC: received descriptors are made
// close-on-exec under ForkLock (see recvFrameHead).
const recvmsgFlags = 0

func lockForkForRecv() (unlock func()) {
	syscall.ForkLock.RLock()
	return syscall.ForkLock.RUnlock
}

// helperFiles: macOS never starts a server through the exec helper
// (mayHang is false there).
func helperFiles([]string) (*os.File, []*os.File, error) {
	return nil, nil, errors.New("no exec helper on macOS")
}

// serverAttr starts a server in a process group of its own (see Linux's).
func serverAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// leftovers reports group pgid as a whole while it has members (as -pgid,
// which the sweep signals as a group); no orphan is ever ours here.
func (sv *supState) leftovers(pgid int, owned func(string) bool, since uint64) (left []int, complete bool) {
	if pgid > 1 && syscall.Kill(-pgid, 0) == nil {
		return []int{-pgid}, true
	}
	return nil, true
}

// socketPair is the host–supervisor socket, close-on-exec on both ends.
// macOS has no SOCK_CLOEXEC: ForkLock keeps a concurrent fork from
// inheriting them before the flag is set.
func socketPair() (host, sup *os.File, err error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return nil, nil, err
	}
	syscall.CloseOnExec(fds[0])
	syscall.CloseOnExec(fds[1])
	return os.NewFile(uintptr(fds[0]), "supervisor"), os.NewFile(uintptr(fds[1]), "supervisor"), nil
}
