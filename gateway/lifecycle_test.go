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

// The SDK logs at Info each session connecting and ending — three lines a
// request of a 2026-07-28 client, each request its own session. Under an
// info-level log (the gateway's log file) they are left out, with the
// SDK's warnings kept; under debug they are there.
func TestSDKInfoLinesOnlyAtDebug(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		var buf bytes.Buffer
		l := quietNotifications(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: level})))
		l.Info("server session connected", "session_id", "")
		l.Warn("server session ended with error")
		got := buf.String()
		if has := strings.Contains(got, "server session connected"); has != (level == slog.LevelDebug) {
			t.Errorf("at %v, the SDK's Info line logged: %v\n%s", level, has, got)
		}
		if !strings.Contains(got, "ended with error") {
			t.Errorf("at %v, the SDK's warning is lost:\n%s", level, got)
		}
	}
}
