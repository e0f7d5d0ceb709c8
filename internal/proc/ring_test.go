package proc

import (
	"bytes"
	"io"
	"math/rand/v2"
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

// The ring keeps exactly the last max bytes, whatever the sizes of the
// writes, as it grows and after it wraps; its buffer never grows past max
// and stays small while little is written.
func TestRingKeepsTheLastBytesAndGrowsOnlyAsWritten(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{1, 7, 256, 1000, 64 << 10} {
		r := newRing(size)
		var all []byte
		for i := 0; i < 300; i++ {
			w := make([]byte, rng.IntN(3*size/2+2))
			for j := range w {
				w[j] = byte('a' + rng.IntN(26))
			}
			if i%50 == 0 {
				w = w[:min(len(w), rng.IntN(3))] // some tiny writes, some empty
			}
			if _, err := r.Write(w); err != nil {
				t.Fatal(err)
			}
			all = append(all, w...)
			want := all[max(0, len(all)-size):]
			got, cut := r.bytes()
			if !bytes.Equal(got, want) || cut != (len(all) > size) {
				t.Fatalf("size %d after %d bytes: kept %d bytes (cut %v), want the last %d (cut %v)", size, len(all), len(got), cut, len(want), len(all) > size)
			}
			if cap(r.buf) > size {
				t.Fatalf("size %d: buffer grew to %d", size, cap(r.buf))
			}
		}
	}
	quiet := newRing(64 << 10)
	quiet.Write([]byte("listening on stdio\n"))
	if c := cap(quiet.buf); c > 1<<10 {
		t.Errorf("a ring with one line written holds %d bytes; want it small", c)
	}
}

// drain's read buffer stays small for a quiet writer and grows for a
// flood, never past bufSize; every byte reaches the ring.
func TestRingDrainBufferFollowsTheWriter(t *testing.T) {
	sizes := &recordingReader{chunks: []int{10, 20, 512, 1024, 2048, 4096, 8192, 8192, 8192, 5}}
	r := newRing(1 << 20)
	r.drain(sizes, 4096)
	want := []int{512, 512, 512, 1024, 2048, 4096, 4096, 4096, 4096, 4096}
	if diff := cmp.Diff(want, sizes.bufs); diff != "" {
		t.Errorf("read buffer sizes (-want +got):\n%s", diff)
	}
	got, _ := r.bytes()
	if len(got) != sizes.total {
		t.Errorf("the ring holds %d bytes, %d were read", len(got), sizes.total)
	}
}

// recordingReader returns chunks of the given sizes (capped by the
// caller's buffer), then EOF, and records each buffer it was given.
type recordingReader struct {
	chunks []int
	bufs   []int
	total  int
}

func (r *recordingReader) Read(p []byte) (int, error) {
	if len(r.chunks) == 0 {
		return 0, io.EOF
	}
	r.bufs = append(r.bufs, len(p))
	n := min(r.chunks[0], len(p))
	r.chunks = r.chunks[1:]
	for i := range p[:n] {
		p[i] = 'x'
	}
	r.total += n
	return n, nil
}
