package gateway

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// The failure limit keeps at most MaxFailureAddrs addresses, however many
// fail; those whose budget has refilled go at the next sweep; an IPv6
// client is counted by its /64.
func TestFailLimitBounded(t *testing.T) {
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	f := newFailLimit(3, func() time.Time { return now }, nil)
	from := func(addr string) *http.Request { return &http.Request{RemoteAddr: addr} }
	blocked := from("192.0.2.7:4000")
	for range 3 {
		f.failed(blocked)
	}
	if f.wait(blocked) <= 0 {
		t.Fatal("an address past its budget is not refused")
	}
	for i := range 2 * MaxFailureAddrs {
		now = now.Add(time.Millisecond)
		f.failed(from(fmt.Sprintf("10.%d.%d.%d:1", i>>16&255, i>>8&255, i&255)))
		if len(f.m) > MaxFailureAddrs {
			t.Fatalf("%d addresses kept after %d failed, want at most %d", len(f.m), i+1, MaxFailureAddrs)
		}
	}
	if int(f.n.Load()) != len(f.m) {
		t.Errorf("%d addresses kept, counted %d", len(f.m), f.n.Load())
	}
	now = now.Add(2 * time.Minute)
	f.failed(from("198.51.100.1:1"))
	if len(f.m) != 1 {
		t.Errorf("%d addresses kept once the others' budgets refilled, want 1", len(f.m))
	}
	// An IPv6 client is one /64.
	for i := range 3 {
		f.failed(from(fmt.Sprintf("[2001:db8::%d]:1", i+1)))
	}
	if f.wait(from("[2001:db8::ffff]:2")) <= 0 {
		t.Error("three refusals from one /64 do not hold up another address of it")
	}
	if f.wait(from("[2001:db8:0:1::1]:2")) != 0 {
		t.Error("another /64 is held up")
	}
}
