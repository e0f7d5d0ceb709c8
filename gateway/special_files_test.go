package gateway_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/internal/safefile/safefiletest"
)

// Issue 28, point 7, for the gateway's own files: an auth file or audit key
// that is a link to /dev/zero or a named pipe is an error saying what it
// is, at once (not an endless read, not an open that waits for a writer).
func TestGatewayFilesRefuseSpecialFiles(t *testing.T) {
	for _, k := range []struct {
		name, want string
		make       func(testing.TB, string)
	}{
		{"dev zero", "it is a character device", safefiletest.DevZero},
		{"fifo", "it is a named pipe (FIFO)", safefiletest.FIFO},
	} {
		t.Run(k.name, func(t *testing.T) {
			dir := t.TempDir()
			auth := filepath.Join(dir, gateway.AuthFileName)
			k.make(t, auth)
			if _, exists, err := gateway.ReadAuthFile(auth); !exists || err == nil || !strings.Contains(err.Error(), k.want) {
				t.Errorf("ReadAuthFile = %v, %v; want an error saying %q", exists, err, k.want)
			}
			key := filepath.Join(dir, "audit.key")
			k.make(t, key)
			if _, err := gateway.LoadAuditKey(key); err == nil || !strings.Contains(err.Error(), k.want) {
				t.Errorf("LoadAuditKey err = %v; want it to say %q", err, k.want)
			}
		})
	}
}
