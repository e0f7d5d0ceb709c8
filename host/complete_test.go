package host_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/npmtest"
)

// Completion against server-everything, whose completable-prompt completes
// its department argument, then the name argument from the department
// chosen.
func TestCompleteEverything(t *testing.T) {
	t.Parallel() // waits on its own child processes and measures no time
	p := npmtest.Install(t)
	h := newHost(t, cfgOf(
		resolved("everything", config.Server{Type: config.TypeStdio, Command: p.Node, Args: []string{p.Everything}}),
		stdio("echo", "echo"),
	), nil)
	ctx := ctxFor(t, 60*time.Second)
	ref := host.PromptArgRef("completable-prompt")

	got, err := h.Complete(ctx, "everything", ref, "department", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Engineering", "Sales", "Marketing", "Support"}, got.Values); diff != "" {
		t.Errorf("departments (-want +got):\n%s", diff)
	}
	got, err = h.Complete(ctx, "everything", ref, "department", "S", nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Sales", "Support"}, got.Values); diff != "" {
		t.Errorf("departments starting with S (-want +got):\n%s", diff)
	}
	got, err = h.Complete(ctx, "everything", ref, "name", "", map[string]string{"department": "Engineering"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Alice", "Bob", "Charlie"}, got.Values); diff != "" {
		t.Errorf("names in Engineering (-want +got):\n%s", diff)
	}

	// The echo server offers no completions: nothing, and no error.
	got, err = h.Complete(ctx, "echo", host.PromptArgRef("greet"), "name", "", nil)
	if err != nil || len(got.Values) != 0 {
		t.Errorf("echo: %v, %v; want no values and no error", got, err)
	}
	if _, err := h.Complete(ctx, "ghost", ref, "department", "", nil); err == nil || !strings.Contains(err.Error(), "unknown server") {
		t.Errorf("unknown server: %v", err)
	}
	if _, err := h.Complete(ctx, "everything", nil, "department", "", nil); err == nil {
		t.Error("nil reference accepted")
	}
}

// The prompt list follows notifications/prompts/list_changed: a prompt the
// echo server adds at runtime is listed without a refresh.
func TestPromptsFollowListChanged(t *testing.T) {
	h := newHost(t, cfgOf(stdio("echo", "echo")), nil)
	ctx := ctxFor(t, 30*time.Second)
	has := func(name string) bool {
		prompts, _, err := h.Prompts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range prompts {
			if p.Prompt.Name == name {
				return true
			}
		}
		return false
	}
	if has("fresh_prompt") {
		t.Fatal("fresh_prompt listed before it was added")
	}
	mustCall(t, h, "mcp__echo__add_prompt", map[string]any{"name": "fresh_prompt"})
	deadline := time.Now().Add(10 * time.Second) // the notification is asynchronous
	for !has("fresh_prompt") {
		if time.Now().After(deadline) {
			t.Fatal("fresh_prompt not listed 10 s after prompts/list_changed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	res, err := h.GetPrompt(ctx, "echo", "fresh_prompt", nil)
	if err != nil || len(res.Messages) == 0 {
		t.Fatalf("GetPrompt(fresh_prompt) = %v, %v", res, err)
	}
}
