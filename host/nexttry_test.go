package host_test

import (
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
)

// TestNextTryNote: the reason of a server in error says when it is tried
// again in whole seconds, rounded up, so a try under half a second away
// is not announced as "next try in 0s".
func TestNextTryNote(t *testing.T) {
	now := time.Now()
	for _, tt := range []struct {
		in   time.Duration
		want string
	}{
		{300 * time.Millisecond, "; next try in 1s"},
		{time.Second, "; next try in 1s"},
		{1500 * time.Millisecond, "; next try in 2s"},
		{0, "; trying again now"},
	} {
		st := host.ServerStatus{State: host.StateError, NextTry: now.Add(tt.in)}
		if got := st.NextTryNote(now); got != tt.want {
			t.Errorf("next try %v away: %q, want %q", tt.in, got, tt.want)
		}
	}
}
