package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRunner(t *testing.T) {
	for cmd, want := range map[string]string{
		"npx": "npm", "/usr/bin/npm": "npm", `C:\nodejs\npx.cmd`: "npm", "uvx": "uv", "/home/u/.local/bin/uv": "uv",
		"pipx": "pipx", "bunx": "bun", "/home/u/.bun/bin/bun": "bun", "node": "", "npx-wrapper": "", "": "",
	} {
		if got := Runner(cmd); got != want {
			t.Errorf("Runner(%q) = %q, want %q", cmd, got, want)
		}
	}
}

func TestProgramName(t *testing.T) {
	for cmd, want := range map[string]string{
		"npx": "npx", "/usr/bin/uvx": "uvx", `C:\Program Files\nodejs\NPX.cmd`: "npx", `C:\Python\python.exe`: "python",
		"./bin/my-server": "my-server", "": ".",
	} {
		if got := ProgramName(cmd); got != want {
			t.Errorf("ProgramName(%q) = %q, want %q", cmd, got, want)
		}
	}
}

func TestParseNpmrc(t *testing.T) {
	got := ParseNpmrc([]byte(`# a comment
; another
registry = "http://127.0.0.1:4873/"
@corp:registry=https://npm.corp.example/
//npm.corp.example/:_authToken=${NPM_TOKEN}
Cache=~/.npm-other
not a setting
=novalue
registry=https://registry.npmjs.org/
`))
	want := map[string]string{
		"registry":                       "https://registry.npmjs.org/",
		"@corp:registry":                 "https://npm.corp.example/",
		"//npm.corp.example/:_authtoken": "${NPM_TOKEN}",
		"cache":                          "~/.npm-other",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParseIni(t *testing.T) {
	got := ParseIni([]byte("[global]\nindex_url = https://pypi.corp/simple\ntimeout: 60\n  continued\n[install]\nIndex-URL=https://other/simple\n"))
	want := map[string]map[string]string{
		"global":  {"index-url": "https://pypi.corp/simple", "timeout": "60"},
		"install": {"index-url": "https://other/simple"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParseUvIndex(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`index-url = "https://a/simple"`, "https://a/simple"},
		{"[[index]]\nname = \"x\"\nurl = \"https://x/simple\"\n[[index]]\nurl = 'https://d/simple' # the default\ndefault = true\n", "https://d/simple"},
		{"[[index]]\nurl = \"https://x/simple\"\n", ""},
		{"[pip]\nindex-url = \"https://not-top/simple\"\n", ""},
		{"", ""},
	} {
		if got := ParseUvIndex([]byte(tt.in)); got != tt.want {
			t.Errorf("ParseUvIndex(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// The parsers take any bytes (a user's file may hold anything): they
// never panic, keys come out lower-case and trimmed, and a well-formed
// "registry=" line survives whatever surrounds it.
func FuzzParseNpmrc(f *testing.F) {
	f.Add([]byte("registry=https://r/\n"), "https://x/")
	f.Add([]byte("\"\n=\n;x\n#\n"), "'q'")
	f.Fuzz(func(t *testing.T, b []byte, url string) {
		for k := range ParseNpmrc(b) {
			if k != strings.ToLower(strings.TrimSpace(k)) || k == "" {
				t.Fatalf("key %q", k)
			}
		}
		ParseIni(b)
		ParseUvIndex(b)
		if strings.ContainsAny(url, "\r\n\"'") || strings.TrimSpace(url) != url || url == "" {
			return
		}
		got := ParseNpmrc(append(append(b, "\nregistry="...), url+"\n"...))["registry"]
		if got != url {
			t.Fatalf("registry = %q, want %q", got, url)
		}
	})
}
