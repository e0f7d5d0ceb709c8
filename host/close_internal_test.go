package host

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// A call that passed the open check just before Close began finds its
// server stopped and its tools gone: it ends with ErrClosed, not with "no
// such tool" (TestCloseRacesEveryMethod saw that under load; here the
// resolution runs after Close, as it did there).
func TestResolveAfterCloseIsErrClosed(t *testing.T) {
	cmd, args := testserver.Command("echo")
	def := config.Server{Type: config.TypeStdio, Command: cmd, Args: args}
	cfg := &config.Resolved{Servers: []config.ResolvedServer{{Name: "docs", Written: def, Effective: def,
		Scope: config.ScopeUser, Trust: config.TrustUser, Availability: config.Available}}}
	h := New(cfg, &Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	list, err := h.Tools(ctx)
	if err != nil || len(list.Tools) == 0 {
		t.Fatalf("the server's tools: %v (%d)", err, len(list.Tools))
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.resolveTool(ctx, "mcp__docs__echo"); !errors.Is(err, ErrClosed) {
		t.Errorf("resolving a tool after Close: %v, want ErrClosed", err)
	}
}
