package proc

import (
	"bytes"
	"io"
	"strings"
	"sync"
)

// ring keeps the last len(buf) bytes written to it. Writes never block and
// never grow memory, so a child flooding stderr costs one copy per byte.
type ring struct {
	mu    sync.Mutex
	buf   []byte
	pos   int   // next write index
	total int64 // bytes ever written
}

func newRing(size int) *ring { return &ring{buf: make([]byte, size)} }

// drain copies src into the ring, bufSize bytes at a time, until a read
// fails (EOF once every writer is gone, or src is closed).
func (r *ring) drain(src io.Reader, bufSize int) {
	buf := make([]byte, bufSize)
	for {
		n, err := src.Read(buf)
		r.Write(buf[:n])
		if err != nil {
			return
		}
	}
}

func (r *ring) Write(p []byte) (int, error) {
	n := len(p)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.total += int64(n)
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
	if r.total < int64(len(r.buf)) {
		return append([]byte(nil), r.buf[:r.pos]...), false
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
