//go:build unix

// Package fileowner says whether a file belongs to another user: the
// stores of secrets (OAuth tokens, the encrypted secret file) refuse a
// file they did not create, since its contents could be someone else's.
package fileowner

import (
	"fmt"
	"os"
	"syscall"
)

// Keep gives the open file f the owner and group of the file fi
// describes, where they differ and the system allows it (root may give a
// file to anyone; another user only to a group of theirs). A file that
// replaces a user's (a temporary file renamed over it) then stays theirs
// when root writes it. A refusal is returned for the caller to ignore.
func Keep(f *os.File, fi os.FileInfo) error {
	want, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	now, err := f.Stat()
	if err != nil {
		return err
	}
	if got, ok := now.Sys().(*syscall.Stat_t); ok && got.Uid == want.Uid && got.Gid == want.Gid {
		return nil
	}
	return f.Chown(int(want.Uid), int(want.Gid))
}

// Other says which other user owns fi's file ("" when the user running
// this program does, or it cannot be told).
func Other(fi os.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) == os.Getuid() {
		return ""
	}
	return fmt.Sprintf("uid %d (not uid %d, who runs this program)", st.Uid, os.Getuid())
}
