//go:build !unix

package oauth_test

import "testing"

// chownToNobody: files have no Unix owner to give away here.
func chownToNobody(t *testing.T, _ string) { t.Skip("no Unix file owners on this system") }
