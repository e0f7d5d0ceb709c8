//go:build linux

package rawio

import (
	"syscall"
	"unsafe"
)

// Read reads into p with raw read(2) calls on rc's descriptor, the poller
// waiting while it has nothing to read. It returns the bytes read (0 with
// a nil error at end of file), the poller's error (a passed deadline, a
// closed descriptor), or the call's syscall.Errno.
func Read(rc syscall.RawConn, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := rc.Read(func(fd uintptr) bool {
		for {
			r1, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			switch e {
			case 0:
				n = int(r1)
				return true
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // the poller waits, then calls again
			default:
				errno = e
				return true
			}
		}
	})
	if err != nil {
		return 0, err
	}
	if errno != 0 {
		return 0, errno
	}
	return n, nil
}

// Write writes all of p with raw write(2) calls on rc's descriptor, the
// poller waiting while it cannot take more. It returns the bytes written
// and, short of all, the poller's error or the call's syscall.Errno.
func Write(rc syscall.RawConn, p []byte) (int, error) {
	var n int
	var errno syscall.Errno
	err := rc.Write(func(fd uintptr) bool {
		for n < len(p) {
			r1, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[n])), uintptr(len(p)-n))
			switch e {
			case 0:
				n += int(r1)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false // full: wait until the other side drains it
			default:
				errno = e
				return true
			}
		}
		return true
	})
	if err != nil {
		return n, err
	}
	if errno != 0 {
		return n, errno
	}
	return n, nil
}
