package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mapLookup(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func TestExpand(t *testing.T) {
	env := mapLookup(map[string]string{
		"HOME":  "/home/u",
		"EMPTY": "",
		"TOKEN": "s3cr3t",
		"NEST":  "${TOKEN}", // values are never re-scanned
		"lower": "nope",     // not a valid name: never looked up
		"A1_B":  "ab",
	})
	tests := []struct {
		name, in, want string
		missing        []string
	}{
		{"no placeholder", "plain $HOME text", "plain $HOME text", nil},
		{"simple", "${HOME}/bin", "/home/u/bin", nil},
		{"several", "${HOME}:${TOKEN}:${A1_B}", "/home/u:s3cr3t:ab", nil},
		{"unset keeps placeholder", "x${NOPE}y", "x${NOPE}y", []string{"NOPE"}},
		{"missing sorted and unique", "${ZED}${AAA}${ZED}", "${ZED}${AAA}${ZED}", []string{"AAA", "ZED"}},
		{"empty value counts as set", "[${EMPTY}]", "[]", nil},
		{"empty value beats default", "[${EMPTY:-d}]", "[]", nil},
		{"default used", "${NOPE:-fallback}", "fallback", nil},
		{"default unused", "${HOME:-fallback}", "/home/u", nil},
		{"empty default", "[${NOPE:-}]", "[]", nil},
		{"default with colon and dash", "${NOPE:-a:-b}", "a:-b", nil},
		{"nested default falls through", "${NOPE:-${TOKEN}}", "s3cr3t", nil},
		{"nested default both unset", "${NOPE:-${ALSO}}", "${ALSO}", []string{"ALSO"}},
		{"nested default not reported when outer set", "${HOME:-${ALSO}}", "/home/u", nil},
		{"nested twice", "${N1:-${N2:-deep}}", "deep", nil},
		{"lowercase left alone", "${lower}", "${lower}", nil},
		{"mixed case left alone", "${Home}", "${Home}", nil},
		{"leading digit left alone", "${1A}", "${1A}", nil},
		{"bad operator left alone", "${HOME-x}", "${HOME-x}", nil},
		{"escaped", "$${TOKEN}", "${TOKEN}", nil},
		{"escaped unset not missing", "$${NOPE}", "${NOPE}", nil},
		{"double dollar elsewhere untouched", "a$$b$", "a$$b$", nil},
		{"escape then real", "$${A}${HOME}", "${A}/home/u", nil},
		{"unterminated", "${HOME", "${HOME", nil},
		{"unterminated default", "${NOPE:-x", "${NOPE:-x", nil},
		{"unterminated outer expands inner", "${NOPE:-${HOME}", "${NOPE:-/home/u", nil},
		{"lone ${", "${", "${", nil},
		{"empty name", "${}", "${}", nil},
		{"value not rescanned", "${NEST}", "${TOKEN}", nil},
		{"escaped in default", "${NOPE:-$${X}}", "${X}", nil},
		{"brace in default", "${NOPE:-{x}}", "{x}", nil},
		{"utf8 around", "ü${HOME}ü", "ü/home/uü", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, missing := Expand(tt.in, env)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Expand(%q) output (-want +got):\n%s", tt.in, diff)
			}
			if diff := cmp.Diff(tt.missing, missing); diff != "" {
				t.Errorf("Expand(%q) missing (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// ${HOME}, which mcp import writes for VS Code's ${userHome}, names the
// home directory on Windows too, where HOME is usually unset: there an
// unset HOME is USERPROFILE. Elsewhere, and when HOME is set (even
// empty), HOME is what it is.
func TestExpandHomeOnWindows(t *testing.T) {
	profile := map[string]string{"USERPROFILE": `C:\Users\u`}
	both := map[string]string{"HOME": "/home/u", "USERPROFILE": `C:\Users\u`}
	for _, tt := range []struct {
		goos, in string
		env      map[string]string
		want     string
		missing  []string
	}{
		{"windows", "${HOME}/.config", profile, `C:\Users\u/.config`, nil},
		{"windows", "${HOME:-x}", profile, `C:\Users\u`, nil},
		{"windows", "${HOME}", both, "/home/u", nil},
		{"windows", "${HOME}", map[string]string{"HOME": "", "USERPROFILE": `C:\Users\u`}, "", nil},
		{"windows", "${HOME}", nil, "${HOME}", []string{"HOME"}},
		{"windows", "${USERPROFILE}", map[string]string{"HOME": "/home/u"}, "${USERPROFILE}", []string{"USERPROFILE"}},
		{"linux", "${HOME}", profile, "${HOME}", []string{"HOME"}},
		{"darwin", "${HOME:-none}", profile, "none", nil},
	} {
		got, missing := expandOn(tt.goos, tt.in, mapLookup(tt.env))
		if got != tt.want || !cmp.Equal(missing, tt.missing) {
			t.Errorf("%s: expand %q with %v = %q, missing %v; want %q, missing %v", tt.goos, tt.in, tt.env, got, missing, tt.want, tt.missing)
		}
	}
}

func TestIsVarName(t *testing.T) {
	for name, want := range map[string]bool{
		"A": true, "_": true, "A_1": true, "_X9": true,
		"": false, "a": false, "1A": false, "A-B": false, "Aé": false,
	} {
		if got := IsVarName(name); got != want {
			t.Errorf("IsVarName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestExpandServer(t *testing.T) {
	env := mapLookup(map[string]string{"TOKEN": "t0k", "HOST": "example.com", "KEY": "k"})
	written := Server{
		Command: "${BIN:-npx}",
		Args:    []string{"--token", "${TOKEN}", "${ARG_MISSING}"},
		Env:     map[string]string{"${KEY}": "${TOKEN}", "DB": "${DATABASE_URL}"},
		Cwd:     "${HOST}", // cwd is not expanded (expansion does not name it)
		URL:     "https://${HOST}/mcp",
		Headers: map[string]string{"Authorization": "Bearer ${API_TOKEN}"},
	}
	got, missing := expandServer(written, env)
	want := Server{
		Type:    TypeStdio,
		Command: "npx",
		Args:    []string{"--token", "t0k", "${ARG_MISSING}"},
		Env:     map[string]string{"${KEY}": "t0k", "DB": "${DATABASE_URL}"},
		Cwd:     "${HOST}",
		URL:     "https://example.com/mcp",
		Headers: map[string]string{"Authorization": "Bearer ${API_TOKEN}"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("effective (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"API_TOKEN", "ARG_MISSING", "DATABASE_URL"}, missing); diff != "" {
		t.Errorf("missing (-want +got):\n%s", diff)
	}
	// The written definition is untouched and shares nothing.
	got.Args[0], got.Env["DB"] = "changed", "changed"
	if written.Args[0] != "--token" || written.Env["DB"] != "${DATABASE_URL}" {
		t.Errorf("expandServer aliased the written definition: %+v", written)
	}
}
