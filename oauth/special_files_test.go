package oauth

import (
	"errors"
	"os"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/safefile"
	"github.com/switchboard-mcp/switchboard/internal/safefile/safefiletest"
)

// Issue 28, point 7, for the token store: a token file that is a link to
// /dev/zero or a named pipe is an error at once, never read or waited on.
func TestTokenFileRefusesSpecialFiles(t *testing.T) {
	for _, k := range []struct {
		name string
		make func(testing.TB, string)
	}{
		{"dev zero", safefiletest.DevZero},
		{"fifo", safefiletest.FIFO},
	} {
		t.Run(k.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			k.make(t, TokenFile(dir, "srv"))
			st, err := loadStoredAuth(dir, "srv")
			if !errors.Is(err, safefile.ErrNotRegular) {
				t.Errorf("loadStoredAuth = %v, %v; want ErrNotRegular", st, err)
			}
		})
	}
}
