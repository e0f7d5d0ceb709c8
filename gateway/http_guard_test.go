package gateway

import (
	"strings"
	"testing"
)

// FuzzNormalizeOrigin: normalizing never panics and is idempotent, so an
// allowed origin and a request's origin compare the same way however
// either is spelled.
func FuzzNormalizeOrigin(f *testing.F) {
	for _, s := range []string{"http://localhost:8080", "HTTPS://Example.COM:443/", "null", "", "http://[::1]:80", "http://a b", "file://", "http://%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := normalizeOrigin(s)
		if again := normalizeOrigin(n); again != n {
			t.Errorf("normalizeOrigin(%q) = %q, but normalizing that gives %q", s, n, again)
		}
	})
}

// FuzzBearer: a token is found only in a Bearer header, is never empty and
// never carries surrounding space.
func FuzzBearer(f *testing.F) {
	for _, s := range []string{"Bearer abc", "bearer abc", "Basic abc", "Bearer", "Bearer  x y ", "", " Bearer\tabc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		tok, ok := bearer(h)
		if ok != (tok != "") {
			t.Fatalf("bearer(%q) = %q, %v", h, tok, ok)
		}
		if ok {
			if tok != strings.TrimSpace(tok) {
				t.Errorf("bearer(%q) = %q keeps surrounding space", h, tok)
			}
			scheme, _, _ := strings.Cut(strings.TrimSpace(h), " ")
			if !strings.EqualFold(scheme, "Bearer") {
				t.Errorf("bearer(%q) accepted scheme %q", h, scheme)
			}
		}
	})
}

func TestOwnOrigins(t *testing.T) {
	o := ownOrigins("127.0.0.1:0", "127.0.0.1:4000", []string{"https://App.Example.com/"})
	for _, ok := range []string{"http://localhost:4000", "http://127.0.0.1:4000", "http://[::1]:4000", "https://app.example.com", "HTTP://LOCALHOST:4000/"} {
		if !o[normalizeOrigin(ok)] {
			t.Errorf("%s refused", ok)
		}
	}
	for _, bad := range []string{"http://evil.example:4000", "http://localhost:4001", "null", "http://127.0.0.1.evil.example:4000"} {
		if o[normalizeOrigin(bad)] {
			t.Errorf("%s allowed", bad)
		}
	}
	if !ownOrigins("gw.example.com:443", "10.0.0.5:443", nil)[normalizeOrigin("https://gw.example.com")] {
		t.Error("a named bind host's default-port origin is refused")
	}
}

func TestBearer(t *testing.T) {
	for h, want := range map[string]string{"Bearer abc": "abc", "bearer  abc ": "abc", "Basic abc": "", "Bearer": "", "": "", "Bearer ": ""} {
		got, ok := bearer(h)
		if got != want || ok != (want != "") {
			t.Errorf("bearer(%q) = %q, %v", h, got, ok)
		}
	}
}
