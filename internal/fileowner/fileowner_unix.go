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

// Other says which other user owns fi's file ("" when the user running
// this program does, or it cannot be told).
func Other(fi os.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) == os.Getuid() {
		return ""
	}
	return fmt.Sprintf("uid %d (not uid %d, who runs this program)", st.Uid, os.Getuid())
}
