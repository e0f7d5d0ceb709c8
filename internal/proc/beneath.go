package proc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// LeadsOutError is ResolveBeneath's error for a path that leaves the
// directory it must stay beneath: through a link (Link is the link's path,
// Target what it holds), or by its own "..".
type LeadsOutError struct {
	Root, Path   string
	Link, Target string
	// Absolute: the link's target is an absolute path, which is refused
	// even when it names a place beneath Root (as openat2's
	// RESOLVE_BENEATH refuses it).
	Absolute bool
}

func (e *LeadsOutError) Error() string {
	switch {
	case e.Link != "" && e.Absolute:
		return fmt.Sprintf("%s is a link to the absolute path %s, and a path the sandbox shows may only lead to places beneath %s by relative links", e.Link, e.Target, e.Root)
	case e.Link != "":
		return fmt.Sprintf("%s is a link to %s, which leads out of %s", e.Link, e.Target, e.Root)
	}
	return fmt.Sprintf("%s leads out of %s", e.Path, e.Root)
}

// NotDirOrFileError is ResolveBeneath's error for a path beneath the root
// that names something other than a directory or a regular file (a
// device, a FIFO, a socket).
type NotDirOrFileError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotDirOrFileError) Error() string {
	return fmt.Sprintf("%s is a %s, not a directory or a regular file", e.Path, fileKind(e.Mode))
}

func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeDevice != 0 && m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}

// maxLinks bounds the links one resolution follows (as the kernel's 40).
const maxLinks = 40

// ResolveBeneath resolves path, which must be root or below it, following
// links without ever leaving root: a link whose target is absolute, or a
// ".." that would climb above root, is a *LeadsOutError; a path that names
// anything but a directory or a regular file is a *NotDirOrFileError. It
// returns the resolved path and what it names. A path whose last parts do
// not exist gives the resolved part joined with the rest and an error
// wrapping fs.ErrNotExist. root itself is taken as it is.
//
// It is the host's look (for the approval review and for a clear error
// before a start); the Linux sandbox helper resolves again with openat2's
// RESOLVE_BENEATH, whose rules these are, and binds what it opened.
func ResolveBeneath(root, path string) (string, fs.FileInfo, error) {
	return walkBeneath(filepath.Clean(root), filepath.Clean(path), false)
}

// mkdirBeneath is ResolveBeneath that creates what does not exist (each
// directory 0700), never through a link that leads out.
func mkdirBeneath(root, path string) (string, fs.FileInfo, error) {
	return walkBeneath(filepath.Clean(root), filepath.Clean(path), true)
}

func walkBeneath(root, path string, create bool) (string, fs.FileInfo, error) {
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", nil, &LeadsOutError{Root: root, Path: path}
	}
	rest := splitPath(rel)
	cur := root
	links := 0
	var link, target string // the last link followed, to name in an error
	var fi fs.FileInfo
	if len(rest) == 0 {
		fi, err = os.Stat(root)
		if err != nil {
			return root, nil, err
		}
	}
	for len(rest) > 0 {
		part := rest[0]
		rest = rest[1:]
		if part == ".." {
			if cur == root {
				return "", nil, &LeadsOutError{Root: root, Path: path, Link: link, Target: target}
			}
			cur = filepath.Dir(cur)
			fi = nil
			continue
		}
		next := filepath.Join(cur, part)
		fi, err = os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) && create {
			if err = os.Mkdir(next, 0o700); err == nil || errors.Is(err, fs.ErrExist) {
				fi, err = os.Lstat(next) // made, or made by another meanwhile: look again
			}
		}
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return filepath.Join(append([]string{next}, rest...)...), nil, err
			}
			return "", nil, err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			if links++; links > maxLinks {
				return "", nil, fmt.Errorf("%s: too many levels of symbolic links", path)
			}
			if target, err = os.Readlink(next); err != nil {
				return "", nil, err
			}
			link = next
			if filepath.IsAbs(target) {
				return "", nil, &LeadsOutError{Root: root, Path: path, Link: link, Target: target, Absolute: true}
			}
			rest = append(splitPath(target), rest...)
			continue
		}
		if len(rest) > 0 && !fi.IsDir() {
			return "", nil, fmt.Errorf("%s: not a directory", next)
		}
		cur = next
	}
	if !fi.IsDir() && !fi.Mode().IsRegular() {
		return "", nil, &NotDirOrFileError{Path: path, Mode: fi.Mode()}
	}
	return cur, fi, nil
}

func splitPath(p string) []string {
	var out []string
	for _, s := range strings.Split(filepath.ToSlash(p), "/") {
		if s != "" && s != "." {
			out = append(out, s)
		}
	}
	return out
}

// SandboxPathRefused says why no sandbox may show path (resolved, absolute)
// read-only, or read-write when write is set, whatever its policy says;
// "" when it may. Never the whole root (it would hide the view's own /proc
// and /tmp; a sandbox names the directories it needs); nothing of /proc
// (a sandboxed server has a /proc of its own, and the host's shows every
// process); never written: /sys, where a root user sets the kernel's
// settings, and /dev, the host's devices.
func SandboxPathRefused(path string, write bool) string {
	switch {
	case path == "/":
		return "the whole filesystem cannot be shown to a sandboxed server: name the directories it needs"
	case under(path, []string{"/proc"}):
		return "a sandboxed server has a /proc of its own, and never sees the host's"
	case write && under(path, []string{"/sys"}):
		return "a sandboxed server never writes /sys, the kernel's settings"
	case write && under(path, []string{"/dev"}):
		return "a sandboxed server never writes /dev, the host's devices"
	}
	return ""
}

// under reports whether path is one of dirs or below one.
func under(path string, dirs []string) bool {
	for _, d := range dirs {
		if path == d || strings.HasPrefix(path, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}
