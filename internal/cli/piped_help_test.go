package cli

import (
	"strings"
	"testing"
)

// TestHelpNamesPipedColumns: the README promises that each listing's
// --help names the columns it prints piped, the contract a script cuts.
// Each listing here runs piped, and its help must say "Piped" and name
// every column of the header line it printed.
func TestHelpNamesPipedColumns(t *testing.T) {
	w := newRTWorld(t)
	srv := w.server("echo")
	srv["env"] = map[string]string{"TOKEN": "${secret:API_TOKEN}"}
	w.userServers(map[string]any{"echo": srv})
	if _, errOut, code := w.run(false, "gateway", "key", "add", "alice", "--group", "eng"); code != 0 {
		t.Fatalf("gateway key add: exit %d: %s", code, errOut)
	}
	reg := hostileRegistry(t, map[string]string{
		"io.github.example/weather": `{"name":"io.github.example/weather","description":"Weather","version":"1.0.0",
			"packages":[{"registryType":"npm","identifier":"weather-mcp","version":"1.0.0","transport":{"type":"stdio"}}]}`,
	})
	for _, args := range [][]string{
		{"secret", "list"},
		{"gateway", "key", "list"},
		{"mcp", "search", "weather", "--registry", reg},
		{"mcp", "list"},
	} {
		out, errOut, code := w.run(false, args...)
		header, _, _ := strings.Cut(out, "\n")
		if code != 0 || !strings.Contains(header, "\t") {
			t.Errorf("%s: exit %d, no piped header:\n%s%s", strings.Join(args, " "), code, out, errOut)
			continue
		}
		help, _, _ := w.run(false, append(args[:len(args):len(args)], "--help")...)
		help, _, _ = strings.Cut(help, "Usage:")
		if !strings.Contains(help, "Piped") {
			t.Errorf("%s --help does not say what it prints piped", strings.Join(args, " "))
		}
		for _, col := range strings.Split(header, "\t") {
			if !strings.Contains(help, col) {
				t.Errorf("%s --help does not name the piped column %s (header %q)", strings.Join(args, " "), col, header)
			}
		}
	}
}
