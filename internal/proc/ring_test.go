package proc

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRingTail(t *testing.T) {
	tests := []struct {
		name   string
		size   int
		writes []string
		max    int
		want   []string
	}{
		{"empty", 16, nil, 0, nil},
		{"one line no newline", 16, []string{"fatal"}, 0, []string{"fatal"}},
		{"crlf", 16, []string{"a\r\nb\r\n"}, 0, []string{"a", "b"}},
		{"max lines", 64, []string{"1\n2\n3\n4\n"}, 2, []string{"3", "4"}},
		{"split writes", 64, []string{"he", "llo\nwor", "ld\n"}, 0, []string{"hello", "world"}},
		{"wrap drops cut line", 8, []string{"aaaa\nbb\ncc\n"}, 0, []string{"bb", "cc"}},
		{"wrap across writes", 8, []string{"123456\n", "ab\ncd\n"}, 0, []string{"ab", "cd"}},
		{"huge write", 4, []string{strings.Repeat("x", 100) + "\nyz\n"}, 0, []string{"yz"}},
		{"wrapped single long line kept", 4, []string{"abcdefgh"}, 0, []string{"efgh"}},
		{"exact fit not cut", 6, []string{"ab\ncd\n"}, 0, []string{"ab", "cd"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRing(tt.size)
			for _, w := range tt.writes {
				if n, err := r.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if diff := cmp.Diff(tt.want, r.tail(tt.max)); diff != "" {
				t.Errorf("tail (-want +got):\n%s", diff)
			}
		})
	}
}
