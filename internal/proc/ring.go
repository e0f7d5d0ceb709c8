package proc

import (
	"bytes"
	"io"
	"strings"
	"sync"
)

// ring keeps the last max bytes written to it. Writes never block. Its
// buffer grows with what is written, up to max, and never past it: a quiet
// server (most are) costs a few hundred bytes instead of max, and a child
// flooding stderr costs one copy per byte.
type ring struct {
	mu  sync.Mutex
	max int
	// buf holds everything written while len(buf) < max (pos == len(buf));
	// once len(buf) == max it is a ring whose oldest byte is at pos.
	buf   []byte
	pos   int   // next write index
	total int64 // bytes ever written
}

func newRing(size int) *ring { return &ring{max: size} }

// minRingGrow is the first buffer a written ring makes.
const minRingGrow = 256

// drain copies src into the ring until a read fails (EOF once every writer
// is gone, or src is closed). Its read buffer starts small and doubles
// while reads fill it, up to bufSize: a server that writes a line now and
// then keeps a small buffer for its whole life, a flood gets bufSize.
func (r *ring) drain(src io.Reader, bufSize int) {
	buf := make([]byte, min(bufSize, 512))
	for {
		n, err := src.Read(buf)
		r.Write(buf[:n])
		if err != nil {
			return
		}
		if n == len(buf) && len(buf) < bufSize {
			buf = make([]byte, min(2*len(buf), bufSize))
		}
	}
}

func (r *ring) Write(p []byte) (int, error) {
	n := len(p)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.total += int64(n)
	if len(r.buf) < r.max {
		// Still growing: append what fits, never past max.
		k := min(r.max-len(r.buf), len(p))
		if need := len(r.buf) + k; need > cap(r.buf) {
			grown := make([]byte, len(r.buf), min(max(2*cap(r.buf), need, minRingGrow), r.max))
			copy(grown, r.buf)
			r.buf = grown
		}
		r.buf = append(r.buf, p[:k]...)
		p = p[k:]
		r.pos = len(r.buf) % r.max
		if len(p) == 0 {
			return n, nil
		}
	}
	if len(p) > len(r.buf) {
		p = p[len(p)-len(r.buf):]
	}
	for len(p) > 0 {
		c := copy(r.buf[r.pos:], p)
		p = p[c:]
		r.pos = (r.pos + c) % len(r.buf)
	}
	return n, nil
}

// bytes returns the kept bytes, oldest first, and whether older bytes were lost.
func (r *ring) bytes() ([]byte, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.buf) < r.max {
		return append([]byte(nil), r.buf...), false
	}
	out := make([]byte, 0, len(r.buf))
	out = append(out, r.buf[r.pos:]...)
	return append(out, r.buf[:r.pos]...), r.total > int64(len(r.buf))
}

// tail returns the last maxLines lines (all kept lines if maxLines <= 0),
// without line endings. Once the ring has wrapped, its first line is
// dropped: a fragment reads like a different message.
func (r *ring) tail(maxLines int) []string {
	b, cut := r.bytes()
	if cut {
		i := bytes.IndexByte(b, '\n')
		b = b[i+1:] // i == -1 keeps everything: one long line is still worth showing
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	if len(b) == 0 {
		return nil
	}
	lines := strings.Split(string(b), "\n")
	if maxLines > 0 && len(lines) > maxLines {
		lines = lines[len(lines)-maxLines:]
	}
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}
