//go:build !unix

// Package fileowner says whether a file belongs to another user: the
// stores of secrets (OAuth tokens, the encrypted secret file) refuse a
// file they did not create, since its contents could be someone else's.
package fileowner

import "os"

// Keep is Unix-only, as Other is: it does nothing here.
func Keep(*os.File, os.FileInfo) error { return nil }

// Other is Unix-only: elsewhere the files' ACLs are the user's profile's,
// and ownership means little.
func Other(os.FileInfo) string { return "" }
