package main

import (
	"os"
	"testing"
)

// The bare latency client asks for the protocol its spec pins, and
// reports what the session negotiated: the relay rows that compare "the
// same protocol on every hop" rely on both.
func TestBareClientPinsProtocol(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b := &bench{self: self}
	cmd, args := b.echoCommand()
	for _, tc := range []struct{ ask, want string }{
		{"", "2026-07-28"}, // the SDK's newest, which the Go echo server speaks
		{"2025-11-25", "2025-11-25"},
	} {
		res, _, err := b.latencyRun(clientSpec{Kind: "bare", Mode: "latency", N: 3, Warmup: 1,
			Command: cmd, Args: args, Tool: "echo", Arguments: map[string]any{"text": "hi"}, Protocol: tc.ask}, "", "")
		if err != nil {
			t.Fatalf("asking for %q: %v", tc.ask, err)
		}
		if res.Protocol != tc.want || res.Calls != 3 || res.P50 <= 0 {
			t.Errorf("asking for %q: negotiated %q, %d calls, p50 %v µs; want %q, 3 calls", tc.ask, res.Protocol, res.Calls, res.P50, tc.want)
		}
	}
}
