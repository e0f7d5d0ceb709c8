package switchboard_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// askingPrompter answers questions about changed tools (the library's
// ToolChangeAsker) with accept, and records them.
type askingPrompter struct {
	switchboard.Headless
	accept bool
	mu     sync.Mutex
	asked  []host.ToolChange
}

func (p *askingPrompter) AcceptToolChange(_ context.Context, c host.ToolChange) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, c)
	return p.accept, nil
}

// modelReadsHome writes a Switchboard directory with the servers of what
// the model reads: rug (its second start pulls the rug), smug (hidden
// text), echo (given a token; its side_effect hooked by a hook that
// denies).
func modelReadsHome(t *testing.T, settings map[string]any) (dir, home string) {
	t.Helper()
	dir = t.TempDir()
	home = filepath.Join(dir, "sb")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	server := func(name string, args ...string) map[string]any {
		cmd, a := testserver.Command(name, args...)
		return map[string]any{"command": cmd, "args": a}
	}
	echo := server("echo", "-side-effect-file", filepath.Join(dir, "effect.log"))
	echo["env"] = map[string]string{"ECHO_API_TOKEN": "tok_live_4f9a8b7c6d5e4f3a2b1c"}
	writeJSON(t, filepath.Join(home, "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"rug": server("rugpull", "-state", filepath.Join(dir, "rug.starts")), "smug": server("smuggler"), "echo": echo}})
	hook, hookArgs := testserver.Command("hook", "-mode", "deny", "-reason", "library says no")
	if settings == nil {
		settings = map[string]any{}
	}
	settings["permissions"] = map[string]any{"allow": []string{"mcp__rug", "mcp__smug", "mcp__echo"}}
	settings["callHooks"] = []any{map[string]any{"name": "dlp", "command": append([]string{hook}, hookArgs...),
		"on": []string{"before"}, "tools": []string{"mcp__echo__side_effect"}, "timeout": 30000}}
	writeJSON(t, config.UserSettingsPath(home), settings)
	return dir, home
}

func openModelReads(t *testing.T, dir, home string, p switchboard.Prompter) *switchboard.Switchboard {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	sb, err := switchboard.Open(ctx, switchboard.Options{Home: home, HomeDir: dir, ManagedDir: filepath.Join(dir, "managed"),
		Prompter: p, LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	sb.Ready(ctx)
	return sb
}

// The front door: tool definitions as a provider gets them and results as
// the model gets them are cleaned of hidden text, a token a server was
// given is redacted, a call hook's deny is an IsError result; a rug pull
// seen on the next start is held under "toolChanges": "ask", reported as
// an event and in status, and AcceptTools serves it.
func TestLibraryWhatTheModelReads(t *testing.T) {
	dir, home := modelReadsHome(t, map[string]any{"toolChanges": "ask"})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sb := openModelReads(t, dir, home, nil)
	raw, err := sb.Tools(ctx, "anthropic")
	if err != nil {
		t.Fatal(err)
	}
	all := string(jsonJoin(raw))
	if strings.ContainsRune(all, 0xE0049) || !strings.Contains(all, `"description":"Fetches a page."`) ||
		!strings.Contains(all, testserver.RugPullDescription) {
		t.Errorf("tools for the model: %s", all)
	}
	res, err := sb.Call(ctx, "mcp__smug__fetch", map[string]any{"url": "x"})
	if err != nil || strings.ContainsRune(res.Text, 0xE0049) || !strings.Contains(res.Text, "[U+202E]evil") {
		t.Errorf("fetch: %+v %v", res, err)
	}
	res, err = sb.Call(ctx, "mcp__echo__env", map[string]any{"names": []string{"ECHO_API_TOKEN"}})
	if err != nil || strings.Contains(res.Text, "tok_live") || !strings.Contains(res.Text, "ECHO_API_TOKEN=<redacted>") {
		t.Errorf("env: %+v %v", res, err)
	}
	res, err = sb.Call(ctx, "mcp__echo__side_effect", map[string]any{})
	if why, blocked := host.Blocked(res.Raw); err != nil || !res.IsError || !blocked || !strings.Contains(why, "library says no") {
		t.Errorf("hooked call: %+v %v", res, err)
	}
	sb.Close()

	// The next start: rug's add changed.
	sb = openModelReads(t, dir, home, nil)
	var mu sync.Mutex
	var events []host.ToolChange
	sb.Subscribe(ctx, func(ev host.Event) {
		if ev.Kind == host.EventToolChange {
			mu.Lock()
			events = append(events, ev.Changes...)
			mu.Unlock()
		}
	})
	raw, _ = sb.Tools(ctx, "openai")
	if strings.Contains(string(jsonJoin(raw)), "mcp__rug__add") {
		t.Error("the changed tool is offered to the model")
	}
	changes := sb.ToolChanges()
	if len(changes) != 1 || changes[0].Tool != "add" || changes[0].State != host.ChangeHeld {
		t.Fatalf("ToolChanges = %+v", changes)
	}
	mu.Lock()
	if len(events) != 1 || events[0].Tool != "add" {
		t.Errorf("events: %+v", events)
	}
	mu.Unlock()
	for _, st := range sb.Status() {
		if st.Name == "rug" && (len(st.Held) != 1 || len(st.ToolChanges) != 1) {
			t.Errorf("status: held %v, changes %v", st.Held, st.ToolChanges)
		}
	}
	if _, err := sb.Call(ctx, "mcp__rug__add", map[string]any{"a": 1, "b": 2}); !strings.Contains(errString(err), "is held") {
		t.Errorf("call of the held tool: %v", err)
	}
	if got, err := sb.AcceptTools("rug"); err != nil || len(got) != 1 {
		t.Fatalf("AcceptTools = %v, %v", got, err)
	}
	if res, err := sb.Call(ctx, "mcp__rug__add", map[string]any{"a": 1, "b": 2}); err != nil || !strings.Contains(res.Text, "3") {
		t.Errorf("accepted call: %+v %v", res, err)
	}
}

// A Prompter that can ask about tool changes makes "ask" the default and
// is asked, on Tools and on a call of the held tool; headless, the
// default is "notify": the change is served and reported.
func TestLibraryAsksAboutToolChanges(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir, home := modelReadsHome(t, nil)
	sb := openModelReads(t, dir, home, nil)
	if _, err := sb.Tools(ctx, "anthropic"); err != nil {
		t.Fatal(err)
	}
	sb.Close()

	// Headless: notify.
	sb = openModelReads(t, dir, home, nil)
	raw, _ := sb.Tools(ctx, "anthropic")
	if !strings.Contains(string(jsonJoin(raw)), "Before answering") {
		t.Error("headless: the changed tool is not served (notify)")
	}
	if c := sb.ToolChanges(); len(c) != 1 || c[0].State != host.ChangeServed {
		t.Errorf("headless: %+v", c)
	}
	sb.Close()

	// Someone to ask who says no: held, asked once per listing.
	no := &askingPrompter{}
	sb = openModelReads(t, dir, home, no)
	raw, _ = sb.Tools(ctx, "anthropic")
	if strings.Contains(string(jsonJoin(raw)), "Before answering") || len(no.asked) != 1 || no.asked[0].Tool != "add" {
		t.Errorf("declined: asked %+v", no.asked)
	}
	sb.Close()

	// And one who says yes: accepted and served.
	yes := &askingPrompter{accept: true}
	sb = openModelReads(t, dir, home, yes)
	raw, _ = sb.Tools(ctx, "anthropic")
	if !strings.Contains(string(jsonJoin(raw)), "Before answering") || len(yes.asked) != 1 {
		t.Errorf("accepted: asked %+v", yes.asked)
	}
}

func jsonJoin(raw []json.RawMessage) []byte {
	b, _ := json.Marshal(raw)
	return b
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// CallOptions.ToolChanges is asked about the change that holds the called
// tool, in place of a Prompter that cannot ask (the gateway asks the
// calling client so): no keeps it held, yes pins it and the call goes on.
func TestCallOptionsToolChangesAsksForOneCall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir, home := modelReadsHome(t, map[string]any{"toolChanges": "ask"})
	sb := openModelReads(t, dir, home, nil)
	if _, err := sb.Tools(ctx, "anthropic"); err != nil {
		t.Fatal(err)
	}
	sb.Close()

	sb = openModelReads(t, dir, home, nil) // the rug server's second start: add changed
	args := map[string]any{"a": 1, "b": 2}
	if _, err := sb.Call(ctx, "mcp__rug__add", args); !errors.Is(err, host.ErrToolHeld) {
		t.Fatalf("headless call of the held tool: %v", err)
	}
	no := &askingPrompter{}
	if _, err := sb.CallWith(ctx, "mcp__rug__add", args, &switchboard.CallOptions{ToolChanges: no}); !errors.Is(err, host.ErrToolHeld) || len(no.asked) != 1 {
		t.Fatalf("answered no: %v, asked %+v", err, no.asked)
	}
	if c := sb.ToolChanges(); len(c) != 1 || c[0].State != host.ChangeHeld {
		t.Errorf("after no: %+v", c)
	}
	yes := &askingPrompter{accept: true}
	res, err := sb.CallWith(ctx, "mcp__rug__add", args, &switchboard.CallOptions{ToolChanges: yes})
	if err != nil || res.IsError || !strings.Contains(res.Text, "3") || len(yes.asked) != 1 {
		t.Fatalf("answered yes: %v %+v, asked %+v", err, res, yes.asked)
	}
	if c := sb.ToolChanges(); len(c) != 0 {
		t.Errorf("after yes: %+v", c)
	}
}

// rugWhileAsked answers a question about a changed tool with yes, but
// first the server pulls the rug once more: the definition it offers by
// the time the answer comes is not the one the person was shown.
type rugWhileAsked struct {
	t     *testing.T
	sb    *switchboard.Switchboard
	asked []host.ToolChange
}

func (p *rugWhileAsked) AcceptToolChange(ctx context.Context, c host.ToolChange) (bool, error) {
	p.asked = append(p.asked, c)
	if _, err := p.sb.Call(ctx, "mcp__rug__swap", map[string]any{}); err != nil {
		p.t.Errorf("swap: %v", err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		_, _ = p.sb.Call(ctx, "mcp__rug__echo", map[string]any{"text": "x"}) // re-lists a dropped list
		for _, c := range p.sb.ToolChanges() {
			if c.Tool == "add" && strings.Contains(string(c.Current), "Before answering") {
				return true, nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.t.Error("the second change was never seen")
	return true, nil
}

// Yes to a changed tool accepts the definition that was shown, never one
// the server put in its place while the question waited for an answer
// (a gateway's client, a person at a terminal): that one is a change of
// its own, held.
func TestToolChangeAcceptPinsWhatWasShown(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir, home := modelReadsHome(t, map[string]any{"toolChanges": "ask"})
	sb := openModelReads(t, dir, home, nil)
	if _, err := sb.Tools(ctx, "anthropic"); err != nil {
		t.Fatal(err)
	}
	const shown = "Adds two numbers and returns the sum as text, rounded to two places."
	if _, err := sb.Call(ctx, "mcp__rug__swap", map[string]any{"description": shown}); err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"a": 1, "b": 2}
	waitHeld := time.Now().Add(20 * time.Second)
	for {
		_, err := sb.Call(ctx, "mcp__rug__add", args)
		if errors.Is(err, host.ErrToolHeld) {
			break
		}
		if time.Now().After(waitHeld) {
			t.Fatalf("the first change is not held: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	asker := &rugWhileAsked{t: t, sb: sb}
	_, _ = sb.CallWith(ctx, "mcp__rug__add", args, &switchboard.CallOptions{ToolChanges: asker})
	if len(asker.asked) == 0 || !strings.Contains(string(asker.asked[0].Current), shown) {
		t.Fatalf("asked %+v", asker.asked)
	}
	raw, _ := sb.Tools(ctx, "anthropic")
	if strings.Contains(string(jsonJoin(raw)), "Before answering") {
		t.Error("the definition put in place while the question waited is served")
	}
	var held bool
	for _, c := range sb.ToolChanges() {
		if c.Tool == "add" && c.State == host.ChangeHeld && strings.Contains(string(c.Pinned), shown) &&
			strings.Contains(string(c.Current), "Before answering") {
			held = true
		}
	}
	if !held {
		t.Errorf("want add held: pinned as shown, changed since; got %+v", sb.ToolChanges())
	}
}
