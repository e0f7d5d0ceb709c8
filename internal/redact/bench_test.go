package redact

import (
	"fmt"
	"testing"
)

// BenchmarkSetString is one string of an audit line scrubbed by a set of
// known values as a host holds them (its servers' env and header values
// and the secret-named variables of its environment): none of them in the
// text, the common case, and one.
func BenchmarkSetString(b *testing.B) {
	for _, n := range []int{0, 5, 30} {
		var s Set
		for i := range n {
			s.Add(fmt.Sprintf("value-%02d-%s", i, "k3y-0123456789abcdef"))
		}
		for _, text := range []struct{ name, text string }{
			{"absent", "hello switchboard, a tool's argument"},
			{"present", "hello value-03-k3y-0123456789abcdef there"},
		} {
			if n == 0 && text.name == "present" {
				continue
			}
			b.Run(fmt.Sprintf("%d/%s", n, text.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					_ = s.String(text.text)
				}
			})
		}
	}
}
