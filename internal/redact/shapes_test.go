package redact

import (
	"strings"
	"testing"
)

// The may checks skip patterns; what String redacts stays: each shape, in
// any case, the Kelvin sign and the long s that (?i) folds included, and
// text that holds no shape comes back as it was.
func TestStringShapesAfterMayChecks(t *testing.T) {
	if len(shapeNeeds) != len(patterns()) {
		t.Fatalf("%d needs for %d patterns: one each, in order", len(shapeNeeds), len(patterns()))
	}
	for _, tc := range []struct{ in, secret string }{
		{"Authorization: Bearer abc.def.ghi", "abc.def.ghi"},
		{"bEaReR zzz-token-value", "zzz-token-value"},
		{"https://bob:hunter22@example.com/", "hunter22"},
		{"GET /cb?ACCESS_TOKEN=abcdef123&x=1", "abcdef123"},
		{"cmd --Api-Key abc123xyz", "abc123xyz"},
		{"-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEI\n-----END EC PRIVATE KEY-----", "MHcCAQEEI"},
		{`{"dp": "0123456789abcdefghij"}`, "0123456789abcdefghij"},
		{"ſecret=letmein99", "letmein99"},        // long s: (?i)secret
		{"\u212aEY: opensesame1", "opensesame1"}, // Kelvin sign: (?i)key
		{"oauth2: hunter2secret", "hunter2secret"},
		{"my_oauth2: letmein", "letmein"},
		{"token: 4012", "4012"},
		{"password=12a", "12a"},
	} {
		got := String(tc.in)
		if strings.Contains(got, tc.secret) || !strings.Contains(got, Placeholder) {
			t.Errorf("String(%q) = %q, want %q redacted", tc.in, got, tc.secret)
		}
	}
	for _, plain := range []string{"hello switchboard", "the quick brown fox", "keymap.js:12:3", "a - b = c: d",
		// What golang.org/x/oauth2 says when a login fails.
		"oauth2: cannot fetch token: 400 Bad Request", "oauth2: token expired and refresh token is not set",
		"retries: 3, token: 401"} {
		if got := String(plain); got != plain {
			t.Errorf("String(%q) = %q, want it unchanged", plain, got)
		}
	}
}
