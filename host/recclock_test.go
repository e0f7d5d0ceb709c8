package host_test

import (
	"os"
	"sync"
	"testing"
	"time"
)

// recordingClock is real time, except that every After fires at once and
// the delay asked for is recorded: backoff is checked without sleeping.
type recordingClock struct {
	mu     sync.Mutex
	delays []time.Duration
}

func newRecordingClock() *recordingClock { return &recordingClock{} }

func (c *recordingClock) Now() time.Time { return time.Now() }

func (c *recordingClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	c.delays = append(c.delays, d)
	c.mu.Unlock()
	ch := make(chan time.Time, 1)
	ch <- time.Now()
	return ch
}

func (c *recordingClock) Delays() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.delays...)
}

// killPid kills process pid at once (SIGKILL on Unix).
func killPid(t *testing.T, pid int) {
	t.Helper()
	p, err := os.FindProcess(pid)
	if err == nil {
		err = p.Kill()
	}
	if err != nil {
		t.Fatalf("kill %d: %v", pid, err)
	}
}
