//go:build linux && (amd64 || arm64)

package safefile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unsafe"
)

// quickStat answers Seen's question "is this still the file last
// remembered?" with one fstatat made by syscall.RawSyscall6, which does
// not tell the Go scheduler it entered the kernel.
//
// Why (docs/benchmarks.md, "The pins check and the runtime's monitor
// thread"): a gateway stats the pins file before every call. os.Stat
// enters the kernel through the scheduler (entersyscall), and when the
// process was idle the whole time before — every call of a client that
// waits for each answer — that entry first wakes the runtime's monitor
// thread (sysmon) from its deep sleep: a futex wake on the call's path,
// and a thread that then polls every 20 µs until the process is idle
// again. For `serve --stdio` it was half of the process's context
// switches and ~6 µs of each call's ~30 µs on its way to the server.
//
// A raw system call keeps its P for as long as it lasts: a stat that
// hangs (a network file system whose server went away) would hold one
// of the process's Ps instead of only a thread. So the raw stat is only
// made where the file's directory is on a local file system (statfs's
// f_type, read when the path is first seen); anywhere else, and on other
// platforms (seen_other.go), os.Stat answers.
type quickStat struct {
	path  string // the path the fields below are for
	cpath []byte // path, NUL-terminated
	local bool   // the directory is on a local file system
}

// atFDCWD is AT_FDCWD (-100): fstatat resolves a relative path from the
// working directory, as os.Stat does.
const atFDCWD = ^uintptr(99)

// localFS reports whether f_type is one of the local file systems a
// stat of a cached file does not wait on another machine for.
func localFS(fsType int64) bool {
	switch fsType {
	case 0xef53, // ext2, ext3, ext4
		0x58465342, // xfs
		0x9123683e, // btrfs
		0x01021994, // tmpfs
		0x794c7630, // overlayfs (containers)
		0xf2f52010, // f2fs
		0xca451a4e, // bcachefs
		0x2fc12fc1: // zfs
		return true
	}
	return false
}

// same reports whether path is, by a raw stat, the very file fi describes
// (or is still missing when fi is nil). false means "not known to be the
// same": the caller decides with os.Stat.
func (q *quickStat) same(path string, fi os.FileInfo) bool {
	if q.path != path || path == "" {
		var fs syscall.Statfs_t
		if path == "" || strings.IndexByte(path, 0) >= 0 || syscall.Statfs(filepath.Dir(path), &fs) != nil {
			return false // asked again next time: the directory may come
		}
		q.path, q.local = path, localFS(int64(fs.Type))
		q.cpath = append([]byte(path), 0)
	}
	if !q.local {
		return false
	}
	var st syscall.Stat_t
	_, _, errno := syscall.RawSyscall6(sysFstatat, atFDCWD, uintptr(unsafe.Pointer(&q.cpath[0])), uintptr(unsafe.Pointer(&st)), 0, 0, 0)
	if errno != 0 {
		// Still missing is still the same; any other answer (the file
		// vanished, or cannot be read now) os.Stat decides again.
		return fi == nil && errno == syscall.ENOENT
	}
	if fi == nil {
		return false
	}
	was, ok := fi.Sys().(*syscall.Stat_t)
	return ok && was.Dev == st.Dev && was.Ino == st.Ino && was.Size == st.Size &&
		was.Mtim == st.Mtim && was.Mode == st.Mode
}
