package switchboard_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// An embedder follows prompt pinning as it follows tool pinning: a
// changed prompt is reported as an EventPromptChange and by
// PromptChanges, held under "toolChanges": "ask", and served once
// AcceptPromptChange pins what was shown; after Close nothing is pinned.
func TestLibraryPromptChanges(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "sb")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd, args := testserver.Command("rugpull", "-prompt")
	writeJSON(t, filepath.Join(home, "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"rug": map[string]any{"command": cmd, "args": args}}})
	writeJSON(t, config.UserSettingsPath(home), map[string]any{"toolChanges": "ask",
		"permissions": map[string]any{"allow": []string{"mcp__rug"}}})
	sb := openModelReads(t, dir, home, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	var mu sync.Mutex
	var events []host.PromptChange
	sb.Subscribe(ctx, func(ev host.Event) {
		if ev.Kind == host.EventPromptChange {
			mu.Lock()
			events = append(events, ev.PromptChanges...)
			mu.Unlock()
		}
	})
	served := func() string {
		prompts, _, err := sb.Host().Prompts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range prompts {
			if p.Server == "rug" && p.Prompt.Name == "summarize" {
				return p.Prompt.Description
			}
		}
		return ""
	}
	if d := served(); d != testserver.RugPullPromptDescription {
		t.Fatalf("first listing: summarize = %q", d)
	}
	if _, err := sb.Call(ctx, "mcp__rug__swap_prompt", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	var changes []host.PromptChange
	for changes = sb.PromptChanges(); len(changes) == 0 && ctx.Err() == nil; changes = sb.PromptChanges() {
		served() // the list_changed drops the list; listing again decides
	}
	if len(changes) != 1 || changes[0].Prompt != "summarize" || changes[0].State != host.ChangeHeld {
		t.Fatalf("PromptChanges = %+v", changes)
	}
	mu.Lock()
	if len(events) != 1 || events[0].Prompt != "summarize" || events[0].State != host.ChangeHeld {
		t.Errorf("EventPromptChange: %+v", events)
	}
	mu.Unlock()
	if d := served(); d != "" {
		t.Fatalf("the held prompt is listed: %q", d)
	}
	if err := sb.AcceptPromptChange(changes[0]); err != nil {
		t.Fatal(err)
	}
	if d := served(); d != testserver.RugPullPromptEvil {
		t.Errorf("accepted: summarize = %q", d)
	}
	if got, err := sb.AcceptPrompts("rug", "nope"); err == nil {
		t.Errorf("AcceptPrompts of a prompt it does not offer = %+v", got)
	}
	sb.Close()
	if _, err := sb.AcceptPrompts("rug"); !errors.Is(err, host.ErrClosed) {
		t.Errorf("AcceptPrompts after Close: %v", err)
	}
	if err := sb.AcceptPromptChange(changes[0]); !errors.Is(err, host.ErrClosed) {
		t.Errorf("AcceptPromptChange after Close: %v", err)
	}
}
