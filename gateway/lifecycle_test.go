package gateway

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// The SDK warns once per session a list_changed could not reach; a gateway
// with many dead sessions logged a line for each, at every change. It is
// logged once a minute, with the count of those left out.
func TestQuietNotifications(t *testing.T) {
	var buf bytes.Buffer
	l := quietNotifications(slog.New(slog.NewTextHandler(&buf, nil))).With("component", "sdk")
	for i := 0; i < 100; i++ {
		l.Warn("calling notifications/tools/list_changed: undelivered message")
	}
	l.Warn("something else")
	got := buf.String()
	if n := strings.Count(got, "could not reach a client"); n != 1 {
		t.Errorf("%d notification warnings, want 1:\n%s", n, got)
	}
	if !strings.Contains(got, "something else") || !strings.Contains(got, "component=sdk") {
		t.Errorf("other lines or attributes lost:\n%s", got)
	}
}
