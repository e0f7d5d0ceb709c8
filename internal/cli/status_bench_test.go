package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkStatusManyServers is `status` (piped) on a repository whose
// .mcp.json defines 10,000 servers, none approved (issue 28 point 8: it
// was quadratic in servers). Loading, launch trust, the host and the
// table are all in it; nothing is spawned.
//
//	go test ./internal/cli -run '^$' -bench StatusManyServers -benchtime 3x
func BenchmarkStatusManyServers(b *testing.B) {
	const n = 10000
	w := newRTWorld(b)
	servers := make(map[string]any, n)
	for i := range n {
		servers[fmt.Sprintf("s%d", i)] = map[string]any{"command": "true", "args": []string{fmt.Sprint(i)}}
	}
	w.writeJSON(filepath.Join(w.proj, ".mcp.json"), map[string]any{"mcpServers": servers})
	for b.Loop() {
		out, errOut, code := w.run(false, "status")
		if code != 0 || strings.Count(out, "needs-approval") != n {
			b.Fatalf("exit %d, %d held servers; stderr:\n%s", code, strings.Count(out, "needs-approval"), errOut)
		}
	}
}
