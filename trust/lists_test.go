package trust_test

import (
	"slices"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/trust"
)

// TestListsCannotBeChangedByCallers: BaseEnv and Fields hand out copies, so
// an importer that edits what it got cannot widen what a repository's
// server inherits or narrow what an approval covers.
func TestListsCannotBeChangedByCallers(t *testing.T) {
	base := trust.BaseEnv()
	if !slices.Contains(base, "PATH") {
		t.Fatalf("BaseEnv() = %v, want PATH in it", base)
	}
	base[0] = "SECRET_TOKEN"
	_ = append(base[:len(base):len(base)], "AWS_SECRET_ACCESS_KEY")
	rs := &config.ResolvedServer{Name: "x", Scope: config.ScopeProject, Trust: config.TrustRepo,
		Written: config.Server{Command: "x"}}
	got := trust.Environ(rs, []string{"PATH=/bin", "SECRET_TOKEN=s", "AWS_SECRET_ACCESS_KEY=a"})
	if !slices.Equal(got, []string{"PATH=/bin"}) {
		t.Errorf("after editing BaseEnv's result, Environ = %v, want [PATH=/bin]", got)
	}
	if again := trust.BaseEnv(); again[0] != "PATH" {
		t.Errorf("BaseEnv()[0] = %q after a caller changed its copy, want PATH", again[0])
	}

	fields := trust.Fields()
	if !slices.Contains(fields, "env") {
		t.Fatalf("Fields() = %v, want env in it", fields)
	}
	for i := range fields {
		fields[i] = "nothing"
	}
	store := trust.Open(t.TempDir())
	if _, err := store.Approve("/ws", rs, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	rs.Written.Env = map[string]string{"NODE_OPTIONS": "--require ./x.js"}
	if v := store.Check(rs, "/ws"); !slices.Equal(v.Changed, []string{"env"}) {
		t.Errorf("after editing Fields' result, Changed = %v (status %v), want [env]", v.Changed, v.Status)
	}
	if again := trust.Fields(); again[0] != "type" {
		t.Errorf("Fields()[0] = %q after a caller changed its copy, want type", again[0])
	}
}
