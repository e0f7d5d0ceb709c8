package shape

import (
	"regexp"
	"strings"
	"testing"
)

// FuzzLegalToolName checks the hand-written name check against the
// expression the providers document, ^[a-zA-Z0-9_-]{1,64}$.
func FuzzLegalToolName(f *testing.F) {
	re := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	for _, s := range []string{"", "a", "mcp__github__create_issue", "a b", "é", "x\n", strings.Repeat("a", 64), strings.Repeat("a", 65), "-_-", "a.b", "A9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if got, want := legalToolName(name), re.MatchString(name); got != want {
			t.Fatalf("legalToolName(%q) = %v, the expression says %v", name, got, want)
		}
	})
}
