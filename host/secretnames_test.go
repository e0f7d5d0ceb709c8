package host_test

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
)

// A name is sent back as it is — a tool's, a parameter's, a prompt's, an
// argument's, a resource's URI — so a secret in one cannot be replaced
// with <redacted> as it is in text. A server that puts a secret value it
// was given into a name (hostile-peer -leak) has that tool, prompt or
// resource left out of the lists, with a warning that names the server
// and not the secret; the rest of its lists is served. Before, the names
// reached the model whole.
func TestSecretsInNamesAreNotServed(t *testing.T) {
	const token = "tok_live_1a2b3c4d5e6f7a8b9c0d"
	peer := stdio("peer", "hostile-peer", "-leak", "PEER_API_TOKEN")
	peer.Effective.Env = map[string]string{"PEER_API_TOKEN": token}
	peer.Written.Env = peer.Effective.Env
	h := newHost(t, cfgOf(peer), nil)
	ctx := ctxFor(t, 20*time.Second)

	tl, err := h.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range append(tl.Tools, tl.Deferred...) {
		names = append(names, tool.Name)
	}
	all := strings.Join(names, " ")
	if !strings.Contains(all, "mcp__peer__leaky") || !strings.Contains(all, "mcp__peer__fake_blocked") {
		t.Errorf("the server's other tools are not served: %s", all)
	}
	if b := string(unescapedJSON(t, tl)); strings.Contains(b, token) || strings.Contains(all, "param_leak") {
		t.Errorf("a tool whose name, or a parameter's, holds the secret is served:\n%s", b)
	}
	checkWarning(t, tl.Warnings, "peer: 2 tools not served", token)
	if _, err := h.Call(ctx, "mcp__peer__leak_"+token, map[string]any{}); err == nil {
		t.Error("the tool named with the secret can be called")
	}
	for _, st := range h.Status() {
		if st.Name == "peer" && st.SecretNamed != 2 {
			t.Errorf("status says %d tools not served for a secret in a name, want 2", st.SecretNamed)
		}
	}

	prompts, warnings, err := h.Prompts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b := string(unescapedJSON(t, prompts)); strings.Contains(b, token) || strings.Contains(b, "arg_leak") || !strings.Contains(b, "leaky_prompt") {
		t.Errorf("prompts:\n%s", b)
	}
	checkWarning(t, warnings, "peer: 2 prompts not served", token)

	resources, warnings, err := h.Resources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(resources) != 1 || resources[0].Resource.URI != "leak://readme" {
		t.Errorf("resources: %s", unescapedJSON(t, resources))
	}
	checkWarning(t, warnings, "peer: 1 resource not served", token)
	templates, warnings, err := h.ResourceTemplates(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b := string(unescapedJSON(t, templates)); strings.Contains(b, token) {
		t.Errorf("templates:\n%s", b)
	}
	checkWarning(t, warnings, "peer: 1 resource template not served", token)
}

func checkWarning(t *testing.T, warnings []string, want, secret string) {
	t.Helper()
	all := strings.Join(warnings, "\n")
	if !strings.Contains(all, want) || strings.Contains(all, secret) {
		t.Errorf("warnings %q, want %q and never the secret", warnings, want)
	}
}

// A short secret value (a password that is also a word) leaves names
// alone: in a name it is as likely the server's own word (a tool
// postgres_query beside a DB_PASSWORD of postgres), so the tool is served;
// in text the value is still replaced.
func TestShortSecretsLeaveNamesServed(t *testing.T) {
	const word = "postgres"
	peer := stdio("peer", "hostile-peer", "-leak", "DB_PASSWORD")
	peer.Effective.Env = map[string]string{"DB_PASSWORD": word}
	peer.Written.Env = peer.Effective.Env
	h := newHost(t, cfgOf(peer), nil)
	tl, err := h.Tools(ctxFor(t, 20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range append(tl.Tools, tl.Deferred...) {
		names = append(names, tool.Name)
	}
	all := strings.Join(names, " ")
	if !strings.Contains(all, "mcp__peer__leak_"+word) || !strings.Contains(all, "mcp__peer__param_leak") {
		t.Errorf("tools named with a short secret are not served: %s", all)
	}
	for _, w := range tl.Warnings {
		if strings.Contains(w, "not served") {
			t.Errorf("warning %q for a short secret", w)
		}
	}
	for _, tool := range tl.Tools {
		if tool.Name == "mcp__peer__leaky" && strings.Contains(tool.Tool.Description, word) {
			t.Errorf("the short secret is not replaced in the description: %q", tool.Tool.Description)
		}
	}
}

// A question whose form names a field with a secret value (the answer
// sends the name back, so it cannot be rewritten) is not asked: the
// server gets a decline, as a tool with such a name is not served.
// Before, the name reached the person, or a gateway's client, whole.
func TestQuestionWithASecretInANameIsNotAsked(t *testing.T) {
	const token = "tok_live_1a2b3c4d5e6f7a8b9c0d"
	asker := stdio("asker", "elicit")
	asker.Effective.Env = map[string]string{"ASKER_API_TOKEN": token}
	asker.Written.Env = asker.Effective.Env
	q := &questionLog{}
	h := newHost(t, cfgOf(asker), &host.Options{Prompter: q})
	form := map[string]any{"type": "object", "properties": map[string]any{
		"k_" + token: map[string]any{"type": "string", "title": "your key"}}}
	res := mustCall(t, h, "mcp__asker__ask_form", map[string]any{"message": "confirm", "schema": form})
	if b := string(unescapedJSON(t, res)); !strings.Contains(b, "the user chose decline") {
		t.Errorf("result %s, want the server to get a decline", b)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.asked) != 0 {
		t.Errorf("the question was asked: %s", unescapedJSON(t, q.asked))
	}
}

// A completion value is sent back as an argument's value, so one that
// holds a secret value is left out, as a name holding one is; the
// others are served. The server's error to a completion has the value
// replaced, as a read's does. Before, both came back as the server wrote
// them, to the terminal and to a gateway's client.
func TestSecretsNotInCompletions(t *testing.T) {
	const token = "tok_live_1a2b3c4d5e6f7a8b9c0d"
	peer := stdio("peer", "hostile-peer", "-leak", "PEER_API_TOKEN")
	peer.Effective.Env = map[string]string{"PEER_API_TOKEN": token}
	peer.Written.Env = peer.Effective.Env
	h := newHost(t, cfgOf(peer), nil)
	ctx := ctxFor(t, 20*time.Second)
	got, err := h.Complete(ctx, "peer", host.PromptArgRef("leaky_prompt"), "a", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if b := strings.Join(got.Values, " "); b != "plain after" {
		t.Errorf("completion values %q, want plain and after", got.Values)
	}
	_, err = h.Complete(ctx, "peer", host.PromptArgRef("leaky_prompt"), "a", "fail", nil)
	if err == nil || strings.Contains(err.Error(), token) || !strings.Contains(err.Error(), "cannot complete with key <redacted>") {
		t.Errorf("completion error: %v", err)
	}
}

// A listing's _meta (its keys too) and icons (a source URL a client
// fetches, sizes) have the secret values Switchboard gave servers
// replaced, for tools, prompts, resources and resource templates alike:
// a gateway serves them to its clients as they are. Before, only the
// words a model reads were scrubbed, and hostile-peer -leak's token
// reached a gateway's client in a prompt's icon.
func TestSecretsNotInMetaOrIcons(t *testing.T) {
	const token = "tok_live_1a2b3c4d5e6f7a8b9c0d"
	peer := stdio("peer", "hostile-peer", "-leak", "PEER_API_TOKEN")
	peer.Effective.Env = map[string]string{"PEER_API_TOKEN": token}
	peer.Written.Env = peer.Effective.Env
	h := newHost(t, cfgOf(peer), nil)
	ctx := ctxFor(t, 20*time.Second)
	checked := 0
	check := func(what string, v any) {
		t.Helper()
		checked++
		b := string(unescapedJSON(t, v))
		if strings.Contains(b, token) || !strings.Contains(b, `"key <redacted>":"meta <redacted>"`) ||
			!strings.Contains(b, `"src":"https://icons.example/<redacted>.png"`) || !strings.Contains(b, `"sizes":["16x16","<redacted>"]`) ||
			!strings.Contains(b, `"domain":"https://<redacted>.example"`) {
			t.Errorf("%s:\n%s", what, b)
		}
	}
	tl, err := h.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tl.Tools {
		if tool.Name == "mcp__peer__leaky" {
			check("tool", tool.Tool)
		}
	}
	prompts, _, err := h.Prompts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range prompts {
		if p.Prompt.Name == "leaky_prompt" {
			check("prompt", p.Prompt)
		}
	}
	resources, _, err := h.Resources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range resources {
		check("resource", r.Resource)
	}
	templates, _, err := h.ResourceTemplates(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(templates) != 1 {
		t.Fatalf("templates: %s", unescapedJSON(t, templates))
	}
	check("template", templates[0].Template)
	if checked != 4 {
		t.Errorf("checked %d listings, want the tool, the prompt, the resource and the template", checked)
	}
}

// A question's _meta (a gateway passes it on to its client) has the
// secret values Switchboard gave servers replaced, keys too; a url mode
// question whose elicitation id holds one (an id the server names the
// question by again, as a name) is not asked, as a form naming a field
// with one is not.
func TestQuestionMetaAndIDHoldNoSecret(t *testing.T) {
	const token = "tok_live_1a2b3c4d5e6f7a8b9c0d"
	asker := stdio("asker", "elicit")
	asker.Effective.Env = map[string]string{"ASKER_API_TOKEN": token}
	asker.Written.Env = asker.Effective.Env
	q := &questionLog{}
	h := newHost(t, cfgOf(asker), &host.Options{Prompter: q})
	meta := map[string]any{"key " + token: "meta " + token}
	mustCall(t, h, "mcp__asker__ask_form", map[string]any{"message": "confirm", "meta": meta,
		"schema": map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}})
	res := mustCall(t, h, "mcp__asker__ask_form", map[string]any{"message": "sign in", "url": "https://example.com/login",
		"elicitation_id": "q-" + token})
	if b := string(unescapedJSON(t, res)); !strings.Contains(b, "the user chose decline") {
		t.Errorf("result %s, want the server to get a decline", b)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.asked) != 1 {
		t.Fatalf("asked %s, want only the form question", unescapedJSON(t, q.asked))
	}
	if b := string(unescapedJSON(t, q.asked[0])); strings.Contains(b, token) || !strings.Contains(b, `"key <redacted>":"meta <redacted>"`) {
		t.Errorf("the question's _meta kept the token: %s", b)
	}
}
