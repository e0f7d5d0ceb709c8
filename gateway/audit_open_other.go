//go:build !unix

package gateway

// auditOpenFlags are none where open has no O_NOFOLLOW: the look
// (os.Lstat) before the open refuses a symbolic link there.
const auditOpenFlags = 0
