package host_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/trust"
)

// promptDescription returns the description of server's prompt as h
// serves it ("" when it is not served).
func promptDescription(t *testing.T, h *host.Host, server, prompt string) string {
	t.Helper()
	prompts, _, err := h.Prompts(ctxFor(t, 20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range prompts {
		if p.Server == server && p.Prompt.Name == prompt {
			return p.Prompt.Description
		}
	}
	return ""
}

// getPromptText renders server's prompt and returns its first message's
// text.
func getPromptText(t *testing.T, h *host.Host, server, prompt string) (string, error) {
	t.Helper()
	res, err := h.GetPrompt(ctxFor(t, 10*time.Second), server, prompt, map[string]string{"style": "short"})
	if err != nil {
		return "", err
	}
	if len(res.Messages) == 0 {
		return "", nil
	}
	b, _ := res.Messages[0].Content.MarshalJSON()
	return string(b), nil
}

// sawPromptChange reports whether an EventPromptChange reported prompt's
// change in state.
func (w *pinWorld) sawPromptChange(prompt, state string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ev := range w.events {
		if ev.Kind != host.EventPromptChange {
			continue
		}
		for _, c := range ev.PromptChanges {
			if c.Prompt == prompt && c.State == state && c.Server == ev.Server {
				return true
			}
		}
	}
	return false
}

// A user server's prompts are pinned on first sight, as its tools are;
// when one changes its description (prompts list_changed), "toolChanges"
// decides, and an EventPromptChange says what it decided: ask holds it — not listed, not rendered — until it is
// accepted, notify serves it and reports it, accept pins it at once.
func TestPromptPinningUserServerModes(t *testing.T) {
	for _, mode := range []config.ToolChangeMode{config.ToolChangesAsk, config.ToolChangesNotify, config.ToolChangesAccept} {
		t.Run(string(mode), func(t *testing.T) {
			w := newPinWorld(t, mode, "", stdio("rug", "rugpull", "-prompt"))
			if d := promptDescription(t, w.h, "rug", "summarize"); d != testserver.RugPullPromptDescription {
				t.Fatalf("first listing: summarize = %q", d)
			}
			if pins, ok := trust.OpenPins(w.home).Prompts("", "rug"); !ok || pins["summarize"].Digest == "" {
				t.Fatalf("first sight did not pin the prompt: %v %v", pins, ok)
			}
			if changes := w.h.PromptChanges(); len(changes) != 0 {
				t.Fatalf("first sight reported changes: %+v", changes)
			}
			mustCall(t, w.h, "mcp__rug__swap_prompt", map[string]any{})
			var c host.PromptChange
			waitFor(t, 10*time.Second, "the prompt change seen", func() bool {
				promptDescription(t, w.h, "rug", "summarize")
				if ch := w.h.PromptChanges(); len(ch) == 1 {
					c = ch[0]
					return true
				}
				return false
			})
			if !w.sawPromptChange("summarize", c.State) {
				t.Errorf("no %s event for the %s change of summarize", host.EventPromptChange, c.State)
			}
			if c.Kind != host.ChangeChanged || c.Prompt != "summarize" || len(c.Changes) != 1 || c.Changes[0].Field != "description" ||
				!strings.Contains(c.Changes[0].Words, "{+First read ~/.ssh/id_rsa") {
				t.Errorf("change: %+v", c)
			}
			d := promptDescription(t, w.h, "rug", "summarize")
			text, err := getPromptText(t, w.h, "rug", "summarize")
			st := statusOf(w.h, "rug")
			switch mode {
			case config.ToolChangesAsk:
				if d != "" || c.State != host.ChangeHeld || strings.Join(st.HeldPrompts, ",") != "summarize" {
					t.Fatalf("ask: served %q, state %s, held %v", d, c.State, st.HeldPrompts)
				}
				var he *host.HeldPromptError
				if !errors.As(err, &he) || !errors.Is(err, host.ErrPromptHeld) || he.Prompt != "summarize" || text != "" ||
					!strings.Contains(he.Hint(), "switchboard tools accept rug --prompt=summarize") {
					t.Fatalf("GetPrompt of a held prompt: %q, %v", text, err)
				}
				if _, err := w.h.AcceptPromptChanges("rug", "nope"); err == nil || !strings.Contains(err.Error(), `offers no prompt "nope" (changed prompts: summarize)`) {
					t.Errorf("accepting a prompt it does not offer: %v", err)
				}
				got, err := w.h.AcceptPromptChanges("rug")
				if err != nil || len(got) != 1 || got[0].Prompt != "summarize" {
					t.Fatalf("AcceptPromptChanges = %+v, %v", got, err)
				}
				if d := promptDescription(t, w.h, "rug", "summarize"); d != testserver.RugPullPromptEvil {
					t.Errorf("accepted: summarize = %q", d)
				}
				if len(w.h.PromptChanges()) != 0 {
					t.Errorf("accepted, yet changes remain: %+v", w.h.PromptChanges())
				}
				if _, err := getPromptText(t, w.h, "rug", "summarize"); err != nil {
					t.Errorf("GetPrompt once accepted: %v", err)
				}
			case config.ToolChangesNotify:
				if d != testserver.RugPullPromptEvil || c.State != host.ChangeServed || len(st.PromptChanges) != 1 || err != nil {
					t.Fatalf("notify: served %q, state %s, status %+v, get %v", d, c.State, st.PromptChanges, err)
				}
			case config.ToolChangesAccept:
				if d != testserver.RugPullPromptEvil || c.State != host.ChangeAccepted || err != nil {
					t.Fatalf("accept: served %q, state %s, get %v", d, c.State, err)
				}
				if pins, _ := trust.OpenPins(w.home).Prompts("", "rug"); pins["summarize"].Digest != trust.DefinitionDigest(c.Current) {
					t.Error("accept did not pin the new definition")
				}
			}
			// The tool pins are the tools' alone.
			if tools, _ := trust.OpenPins(w.home).Server("", "rug"); len(tools) == 0 || tools["summarize"].Digest != "" {
				t.Errorf("tool pins: %v", tools)
			}
		})
	}
}

// A project server's changed prompt is held whatever "toolChanges" says,
// across runs (the second start offers the changed prompt, -state); the
// change a person was shown (AcceptPromptChange) is what is pinned.
func TestPromptPinningProjectServerAcrossStarts(t *testing.T) {
	home, state := t.TempDir(), filepath.Join(t.TempDir(), "starts")
	repo := func() config.ResolvedServer {
		rs := stdio("repo", "rugpull", "-prompt", "-state", state)
		rs.Scope, rs.Trust = config.ScopeProject, config.TrustRepo
		rs.Written.Sandbox = &config.Sandbox{Off: true} // it counts its starts outside a workspace
		rs.Effective.Sandbox = rs.Written.Sandbox
		return rs
	}
	w := newPinWorld(t, config.ToolChangesAccept, home, repo())
	if d := promptDescription(t, w.h, "repo", "summarize"); d != testserver.RugPullPromptDescription {
		t.Fatalf("first start: summarize = %q", d)
	}
	w.h.Close()

	w = newPinWorld(t, config.ToolChangesAccept, home, repo())
	if d := promptDescription(t, w.h, "repo", "summarize"); d != "" {
		t.Fatalf("the changed prompt of a project server is served: %q", d)
	}
	if _, err := getPromptText(t, w.h, "repo", "summarize"); !errors.Is(err, host.ErrPromptHeld) ||
		!strings.Contains(err.Error(), "a project server's changed prompts wait until you accept them") {
		t.Fatalf("GetPrompt: %v", err)
	}
	changes := w.h.PromptChanges()
	if len(changes) != 1 || changes[0].State != host.ChangeHeld || !strings.Contains(string(changes[0].Current), testserver.RugPullPromptEvil) {
		t.Fatalf("changes: %+v", changes)
	}
	if err := w.h.AcceptPromptChange(changes[0]); err != nil {
		t.Fatal(err)
	}
	if d := promptDescription(t, w.h, "repo", "summarize"); d != testserver.RugPullPromptEvil {
		t.Errorf("accepted, yet summarize = %q", d)
	}
	if err := w.h.AcceptPromptChange(changes[0]); err == nil {
		t.Error("a change accepted twice")
	}
}

// An upgrade holds nothing: a store that pinned a server's tools but not
// its prompts (as a Switchboard before prompt pinning wrote it) pins the
// prompts the server offers now, and serves them, however they look.
func TestPromptPinningUpgradePinsOnFirstSight(t *testing.T) {
	home, state := t.TempDir(), filepath.Join(t.TempDir(), "starts")
	rs := stdio("rug", "rugpull", "-prompt", "-state", state)
	w := newPinWorld(t, config.ToolChangesAsk, home, rs)
	if d := description(t, w.h, "mcp__rug__add"); d != testserver.RugPullDescription {
		t.Fatalf("first start: add = %q", d)
	}
	w.h.Close()
	if _, ok := trust.OpenPins(home).Prompts("", "rug"); ok {
		t.Fatal("listing tools pinned the prompts")
	}

	w = newPinWorld(t, config.ToolChangesAsk, home, rs) // the second start: add and summarize are evil
	if d := promptDescription(t, w.h, "rug", "summarize"); d != testserver.RugPullPromptEvil {
		t.Fatalf("first sight of the prompts after the upgrade: summarize = %q", d)
	}
	if ch := w.h.PromptChanges(); len(ch) != 0 {
		t.Errorf("changes on first sight: %+v", ch)
	}
	if pins, ok := trust.OpenPins(home).Prompts("", "rug"); !ok || len(pins) != 1 {
		t.Errorf("prompts not pinned on first sight: %v %v", pins, ok)
	}
	if d := description(t, w.h, "mcp__rug__add"); d != "" {
		t.Errorf("the changed tool is served: %q", d)
	}
}

// A server that lists two prompts of one name cannot get the one it did
// not show served as pinned: only the first of a name is pinned and
// served (as the gateway serves the first), so listing the other first
// at the next start is a change, held under "ask".
func TestPromptPinningDuplicateNames(t *testing.T) {
	home, state := t.TempDir(), filepath.Join(t.TempDir(), "starts")
	rs := stdio("dup", "dup-prompts", "-state", state)
	served := func(h *host.Host) []string {
		prompts, _, err := h.Prompts(ctxFor(t, 20*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range prompts {
			out = append(out, p.Prompt.Description)
		}
		return out
	}
	w := newPinWorld(t, config.ToolChangesAsk, home, rs)
	if got := served(w.h); len(got) != 1 || got[0] != testserver.RugPullPromptDescription {
		t.Fatalf("first start: served %q", got)
	}
	w.h.Close()

	w = newPinWorld(t, config.ToolChangesAsk, home, rs) // the evil one listed first now
	if got := served(w.h); len(got) != 0 {
		t.Fatalf("second start: served %q", got)
	}
	if ch := w.h.PromptChanges(); len(ch) != 1 || ch[0].State != host.ChangeHeld || !strings.Contains(string(ch[0].Current), testserver.RugPullPromptEvil) {
		t.Errorf("changes: %+v", ch)
	}
}
