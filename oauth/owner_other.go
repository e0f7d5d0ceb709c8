//go:build !unix

package oauth

import "os"

// otherOwner is Unix-only: elsewhere the store's ACLs are the user's
// profile's, and the mode bits mean little.
func otherOwner(os.FileInfo) string { return "" }
