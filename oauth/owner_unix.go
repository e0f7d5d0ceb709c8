//go:build unix

package oauth

import (
	"fmt"
	"os"
	"syscall"
)

// otherOwner says, for a file of the OAuth store, which other user owns
// it ("" when this user does). The Client only ever creates these files
// itself, so a file that belongs to someone else was put there by them:
// its tokens or key could be theirs, and requests signed with them would
// act as their account.
func otherOwner(fi os.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) == os.Getuid() {
		return ""
	}
	return fmt.Sprintf("uid %d (not uid %d, who runs this program)", st.Uid, os.Getuid())
}
