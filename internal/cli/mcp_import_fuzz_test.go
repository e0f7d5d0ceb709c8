package cli

import (
	"strings"
	"testing"

	"github.com/tailscale/hujson"
)

// FuzzImportRewrites runs the rewrites an import applies to a server's
// definition — a repository's Gemini or Windsurf file, a Gemini
// extension's variables and environment references, VS Code's inputs,
// this machine's paths and the editor's path variables — on any bytes: a
// repository writes them. None may panic, and whatever one returns in
// place of a definition that parsed still parses (the file writer and
// config.ParseServer read it next).
func FuzzImportRewrites(f *testing.F) {
	for _, seed := range []string{
		`{"command":"npx","args":["-y","x"],"env":{"K":"$HOME"},"trust":true}`,
		`{"httpUrl":"https://x/mcp","headers":{"Authorization":"Bearer $TOKEN"},"timeout":5000}`,
		`{"serverUrl":"https://x/mcp?api_key=AAA&token=BBB","disabled":true}`,
		`{"url":"https://x/sse","includeTools":["a"],"excludeTools":["b"],"oauth":{"enabled":true}}`,
		`{"command":"cmd","args":["/c","npx","-y","x"],"cwd":"${workspaceFolder}/sub"}`,
		`{"command":"node","args":["${input:key}","${input:region}","/home/u/ws/a","${userHome}/n"]}`,
		`{"tcp":"127.0.0.1:9","command":"x","args":[1,null,{"a":"${input:"}]}`,
		`// c
{"command":"a", /* b */ "args":["$A_B", "$1"],}`,
		`{"command":"${extensionPath}${/}srv","args":["--root=${workspacePath}","$api_key","${my_key}"],"cwd":"${extensionPath}"}`,
	} {
		f.Add(seed)
	}
	inputs := map[string]vscodeInput{
		"key":    {ID: "key", Type: "promptString", Password: true},
		"region": {ID: "region", Type: "promptString"},
		"proj":   {ID: "proj", Type: "promptString", Default: "p-1"},
	}
	f.Fuzz(func(t *testing.T, def string) {
		_, parseErr := hujson.Parse([]byte(def))
		check := func(step string, out []byte) {
			if parseErr != nil {
				return
			}
			if _, err := hujson.Parse(out); err != nil {
				t.Fatalf("%s turned %q into %q, which does not parse: %v", step, def, out, err)
			}
		}
		for _, from := range []string{"gemini", "windsurf"} {
			for _, off := range []string{"", "listed in mcp.excluded"} {
				out, notes, skip := dialectImport(from, "srv", []byte(def), off)
				if skip == "" {
					check(from, out)
				}
				for _, n := range notes {
					if n == "" {
						t.Fatalf("%s: an empty note for %q", from, def)
					}
				}
			}
		}
		out, _ := resolveInputs([]byte(def), inputs)
		check("resolveInputs", out)
		out, _ = geminiExtensionVars([]byte(def), `/home/u/.gemini/extensions/x"\`)
		check("geminiExtensionVars", out)
		for _, goos := range []string{"linux", "windows"} {
			var refs geminiRefs
			if s := refs.rewrite(def, goos); len(refs.other) == 0 && strings.Contains(s, "$") && !strings.Contains(def, "$") {
				t.Fatalf("rewrite(%q, %s) made a reference up: %q", def, goos, s)
			}
		}
		out, _ = machinePathsAsVars([]byte(def), "/home/u/ws", "/home/u")
		check("machinePathsAsVars", out)
		if out, _, skip := portablePaths([]byte(def)); skip == "" {
			check("portablePaths", out)
		}
	})
}
