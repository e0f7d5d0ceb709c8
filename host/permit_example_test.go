package host_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/policy"
)

// Enforce per-call permissions: one tool allowed, the others refused
// because nobody is there to ask (no Asker).
func ExamplePolicyPermit() {
	cmd, args := testserver.Command("demo")
	def := config.Server{Type: config.TypeStdio, Command: cmd, Args: args}
	cfg := &config.Resolved{Servers: []config.ResolvedServer{{
		Name: "demo", Written: def, Effective: def,
		Scope: config.ScopeSession, Trust: config.TrustUser, Availability: config.Available,
	}}}
	rules := policy.New(policy.NewRule(policy.Allow, "mcp__demo__add", policy.Source{Scope: policy.ScopeUser}))

	h := host.New(cfg, &host.Options{Permit: host.PolicyPermit(rules, nil)})
	defer h.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	res, err := h.Call(ctx, "mcp__demo__add", map[string]any{"a": 2, "b": 3})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(textOf(res))

	_, err = h.Call(ctx, "mcp__demo__echo", map[string]any{"text": "hi"})
	var denied *host.DeniedError
	if errors.As(err, &denied) {
		fmt.Println(errors.Is(err, host.ErrDenied), denied.Decision.Suggest)
	}
	// Output:
	// 2 + 3 = 5
	// true mcp__demo__echo
}
