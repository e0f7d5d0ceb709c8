package host

import "time"

// MaxReconnectAttempts is how many times a server that closed unexpectedly
// is reconnected before it is put in state error.
const MaxReconnectAttempts = 3

// maxBackoff caps the reconnect delay.
const maxBackoff = 30 * time.Second

// Backoff returns the delay before reconnect attempt n (1-based):
// 1000 × 2^(n−1) ms, capped at 30 s.
func Backoff(attempt int) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	if attempt > 16 { // 2^15 s is far past the cap; avoid overflow
		return maxBackoff
	}
	d := time.Second << (attempt - 1)
	if d > maxBackoff {
		return maxBackoff
	}
	return d
}
