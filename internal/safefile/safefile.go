// Package safefile reads the files Switchboard is configured by — scope
// files (.mcp.json, mcp.json), settings, workspace.json, the trust store,
// the OAuth and gateway key files, --settings and --mcp-config files —
// without letting the file take the process.
//
// A repository decides what its .mcp.json is. A symbolic link to /dev/zero
// made a plain read run until memory ran out; a named pipe (or a link to
// one, or to /dev/stdin) made every command wait in open(2) for a writer
// that never came, deaf to Ctrl-C. [ReadFile] therefore opens without
// blocking (O_NONBLOCK: opening a FIFO returns at once), asks the open file
// itself what it is (fstat on the descriptor, so nothing can be swapped in
// between a look and the open), reads only a regular file, and reads at
// most [MaxSize] bytes. Every refusal is an error that says what the file
// is and wraps [ErrNotRegular] or [ErrTooLarge].
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// MaxSize is the largest file ReadFile reads: 8 MiB. A configuration file
// with ten thousand servers is about 2 MiB; anything larger is not one.
const MaxSize = 8 << 20

// ErrNotRegular is wrapped by the error of a path that is not a regular
// file (a named pipe, a device, a socket, a directory).
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is wrapped by the error of a file larger than the limit.
var ErrTooLarge = errors.New("file too large")

// notRegularError says what the file is instead.
type notRegularError struct{ what string }

func (e *notRegularError) Error() string {
	return "it is " + e.what + ", not a regular file"
}

func (e *notRegularError) Is(target error) bool { return target == ErrNotRegular }

// tooLargeError says the limit.
type tooLargeError struct{ limit int64 }

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("it is larger than %s, the most a configuration file may hold", size(e.limit))
}

func (e *tooLargeError) Is(target error) bool { return target == ErrTooLarge }

// ClaudeStateMaxSize is the most ReadFile reads of a file named
// .claude.json: Claude Code keeps its servers there beside every
// project's conversation history, and users' files of tens of MiB are
// common (anthropics/claude-code#6394 reports 65 MB and more).
const ClaudeStateMaxSize = 256 << 20

// limitFor is ReadFile's limit for path.
func limitFor(path string) int64 {
	if filepath.Base(path) == ".claude.json" {
		return ClaudeStateMaxSize
	}
	return MaxSize
}

// ReadFile reads the regular file at path, of at most MaxSize bytes
// (ClaudeStateMaxSize for Claude Code's .claude.json). A
// symbolic link is followed; what it leads to must be a regular file. The
// error is an *fs.PathError, as os.ReadFile's (so a missing file is
// fs.ErrNotExist, an unreadable one fs.ErrPermission); a file that is not
// regular wraps ErrNotRegular, a larger one ErrTooLarge.
func ReadFile(path string) ([]byte, error) {
	data, _, err := Read(path, limitFor(path))
	return data, err
}

// Read is ReadFile with a limit of its own (limit <= 0 means MaxSize), and
// also returns what fstat said of the file it read (its mode, for callers
// that check permissions, and its identity, for callers that watch it).
func Read(path string, limit int64) ([]byte, fs.FileInfo, error) {
	if limit <= 0 {
		limit = MaxSize
	}
	f, err := os.OpenFile(path, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fi, &fs.PathError{Op: "read", Path: path, Err: &notRegularError{what(fi.Mode())}}
	}
	if fi.Size() > limit {
		return nil, fi, &fs.PathError{Op: "read", Path: path, Err: &tooLargeError{limit}}
	}
	// The size can be wrong (a file in /proc says 0, a file may grow while
	// it is read): the limit is kept by the read itself.
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fi, &fs.PathError{Op: "read", Path: path, Err: unwrap(err)}
	}
	if int64(len(data)) > limit {
		return nil, fi, &fs.PathError{Op: "read", Path: path, Err: &tooLargeError{limit}}
	}
	return data, fi, nil
}

// Refused reports whether err is one of Read's refusals (ErrNotRegular or
// ErrTooLarge) and returns its reason (without the path, for callers that
// name the file themselves) and the fix to print with it.
func Refused(err error) (reason, fix string, ok bool) {
	switch {
	case errors.Is(err, ErrNotRegular):
		return unwrap(err).Error(), "replace it with a regular file (a link to a device such as /dev/zero, or a named pipe, is never read)", true
	case errors.Is(err, ErrTooLarge):
		return unwrap(err).Error(), "check that this is the file you meant; a configuration file this large is refused so that reading it cannot exhaust memory", true
	}
	return "", "", false
}

// unwrap drops the *fs.PathError a read error already is.
func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// what names a file mode that is not a regular file.
func what(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device (such as /dev/zero or a terminal)"
	case m&fs.ModeDevice != 0:
		return "a device"
	default:
		return "a special file"
	}
}

// size prints a byte count in MiB or KiB.
func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}
