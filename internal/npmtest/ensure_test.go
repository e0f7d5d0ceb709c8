package npmtest

import (
	"os"
	"testing"
)

// Ensure is Install without a testing.TB: it must find the same install,
// and every path it returns must exist.
func TestEnsureMatchesInstall(t *testing.T) {
	want := Install(t)
	got, err := Ensure(nil)
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	if got != want {
		t.Errorf("Ensure = %+v, Install = %+v", got, want)
	}
	for _, p := range []string{got.Dir, got.Node, got.Everything, got.Filesystem, got.Memory, got.BasicApp, got.SDK, got.Inspector, got.Claude} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("path %s: %v", p, err)
		}
	}
}
