package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/toolsurface"
)

// What a server hides in tag characters, bidi controls and zero-width
// characters never reaches the model: not in a description, a parameter's
// description, a result or a prompt; status reports what was found.
func TestHiddenTextNeverReachesTheModel(t *testing.T) {
	h := newHost(t, cfgOf(stdio("smug", "smuggler")), nil)
	ctx := ctxFor(t, 20*time.Second)
	list, err := h.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var fetch *mcp.Tool
	for _, tl := range list.Tools {
		if tl.Name == "mcp__smug__fetch" {
			fetch = tl.Tool
		}
	}
	if fetch == nil {
		t.Fatal("fetch not listed")
	}
	schema, _ := json.Marshal(fetch.InputSchema)
	for what, s := range map[string]string{"description": fetch.Description, "title": fetch.Title, "schema": string(schema)} {
		if out, f := toolsurface.CleanText(s); f != nil || out != s {
			t.Errorf("%s still holds deceptive text: %+q (%v)", what, s, f)
		}
	}
	if fetch.Title != "Fetch[U+202E]" {
		t.Errorf("title = %q, want the bidi control made visible", fetch.Title)
	}
	res, err := h.Call(ctx, "mcp__smug__fetch", map[string]any{"url": "x"})
	if err != nil {
		t.Fatal(err)
	}
	text := textOf(res)
	if strings.ContainsRune(text, 0xE0049) || strings.Contains(text, "\u202E") || !strings.Contains(text, "[U+202E]evil") ||
		strings.Contains(text, "<mcp_response") || !strings.Contains(text, "&lt;/mcp_response>") {
		t.Errorf("result: %+q", text)
	}
	env := toolsurface.Envelope("smug", "fetch", res)
	if strings.Count(env, "<mcp_response") != 1 {
		t.Errorf("the result opened an envelope of its own: %s", env)
	}
	prompts, _, err := h.Prompts(ctx)
	i := slices.IndexFunc(prompts, func(p host.Prompt) bool { return p.Prompt.Name == "summarize" })
	if err != nil || i < 0 || prompts[i].Prompt.Description != "Summarizes." || prompts[i].Prompt.Arguments[0].Description != "the topic" {
		t.Fatalf("prompts: %+v %v", prompts, err)
	}
	pr, err := h.GetPrompt(ctx, "smug", "summarize", nil)
	if err != nil || pr.Messages[0].Content.(*mcp.TextContent).Text != "Summarize this." {
		t.Fatalf("prompt text: %+v %v", pr, err)
	}
	st := statusOf(h, "smug")
	var found []string
	for _, tf := range st.Findings {
		for _, f := range tf.Findings {
			found = append(found, tf.Tool+" "+f.String())
		}
	}
	all := strings.Join(found, "\n")
	for _, want := range []string{
		`fetch description: 72 tag characters removed (they spelled "` + testserver.SmugglerHidden + `")`,
		"fetch title: 1 bidirectional control made visible",
		"fetch inputSchema.properties.url.description: 1 zero-width character removed",
		"prompt summarize description: 72 tag characters removed",
		"prompt summarize arguments.topic.description: 1 zero-width character removed",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("status findings lack %q:\n%s", want, all)
		}
	}
}

// The secret values Switchboard gave a server never come back in a result
// (a server that echoes its token), and a server's "secrets" mode applies
// to credentials of a known shape: redact replaces them, block withholds
// the result or refuses a call whose arguments hold one.
func TestSecretsGoingTheWrongWay(t *testing.T) {
	const token = "tok_live_4f9a8b7c6d5e4f3a2b1c"
	echo := stdio("echo", "echo")
	echo.Effective.Env = map[string]string{"ECHO_API_TOKEN": token}
	echo.Written.Env = echo.Effective.Env
	redactSrv := stdio("red", "smuggler")
	redactSrv.Effective.Secrets = config.SecretsRedact
	blockSrv := stdio("blk", "smuggler")
	blockSrv.Effective.Secrets = config.SecretsBlock
	blockEcho := stdio("blkecho", "echo")
	blockEcho.Effective.Secrets = config.SecretsBlock
	h := newHost(t, cfgOf(echo, redactSrv, blockSrv, blockEcho), nil)
	ctx := ctxFor(t, 20*time.Second)

	rep := &host.CallReport{}
	res, err := h.Call(host.WithCallReport(ctx, rep), "mcp__echo__env", map[string]any{"names": []string{"ECHO_API_TOKEN"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(res); strings.Contains(got, token) || got != "ECHO_API_TOKEN=<redacted>" {
		t.Errorf("the server's own token came back: %q", got)
	}
	if n := rep.Notes(); len(n.Secrets) != 1 || !strings.Contains(n.Secrets[0], "1 known secret value(s) replaced") {
		t.Errorf("report: %+v", n)
	}
	// Another server echoing it is scrubbed too: the value is known to the host.
	if got := textOf(mustCall(t, h, "mcp__blkecho__echo", map[string]any{"text": "plain"})); got != "plain" {
		t.Errorf("plain text changed: %q", got)
	}

	if got := textOf(mustCall(t, h, "mcp__red__leak", map[string]any{})); got != "found a token: <redacted>" {
		t.Errorf("redact: %q", got)
	}
	res = mustCall(t, h, "mcp__blk__leak", map[string]any{})
	why, blocked := host.Blocked(res)
	if !res.IsError || !blocked || strings.Contains(textOf(res), testserver.SmugglerToken) ||
		!strings.Contains(why, `withheld this result: it holds what looks like a GitHub token`) || !strings.Contains(why, `"secrets": "block"`) {
		t.Errorf("block, result: %v %q", res.IsError, textOf(res))
	}
	effect := filepath.Join(t.TempDir(), "effect")
	res = mustCall(t, h, "mcp__blkecho__echo", map[string]any{"text": "use " + testserver.SmugglerToken})
	if why, _ := host.Blocked(res); !res.IsError || !strings.Contains(why, "blocked this call: its arguments hold what looks like a GitHub token") {
		t.Errorf("block, arguments: %q", textOf(res))
	}
	res = mustCall(t, h, "mcp__blkecho__echo", map[string]any{"text": "the key is " + token})
	if why, _ := host.Blocked(res); !strings.Contains(why, "a secret value Switchboard gave a server") {
		t.Errorf("block, a known value in the arguments: %q", textOf(res))
	}
	if _, err := os.Stat(effect); err == nil {
		t.Error("a blocked call ran")
	}
}

// TestSecretsAndHiddenTextInEveryField: the secret values Switchboard
// gave a server, and text hidden in tag characters, are taken out of every
// string of a result's content blocks — a resource link's name, URI, MIME
// type and icon, an embedded resource's URI and MIME type, an image's MIME
// type — and of a rendered prompt, not only of the text. Before, a link's
// URI carried the server's token to the model (and to a client that
// follows it), hidden instructions rode in a link's name, and a prompt's
// text held the token as the server wrote it.
func TestSecretsAndHiddenTextInEveryField(t *testing.T) {
	const token = "tok_live_9c8b7a6f5e4d3c2b1a0f"
	smug := stdio("smug", "smuggler")
	smug.Effective.Env = map[string]string{"SMUGGLER_API_TOKEN": token}
	smug.Written.Env = smug.Effective.Env
	h := newHost(t, cfgOf(smug), nil)
	ctx := ctxFor(t, 20*time.Second)

	var mu sync.Mutex
	var progress []string
	pctx := host.WithProgress(ctx, func(p *mcp.ProgressNotificationParams) {
		mu.Lock()
		progress = append(progress, p.Message)
		mu.Unlock()
	})
	res, err := h.Call(pctx, "mcp__smug__links", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(progress) != 1 || progress[0] != "using <redacted>" {
		t.Errorf("progress messages %q, want [\"using <redacted>\"]", progress)
	}
	mu.Unlock()
	b := unescapedJSON(t, res)
	if got := string(b); strings.Contains(got, token) || strings.ContainsRune(got, 0xE0049) {
		t.Errorf("a link, resource or image carried the token or hidden text:\n%s", got)
	}
	if !strings.Contains(string(b), `"name":"report"`) || !strings.Contains(string(b), "https://evil.example/c?d=<redacted>") {
		t.Errorf("the link was not kept, cleaned:\n%s", b)
	}

	pr, err := h.GetPrompt(ctx, "smug", "env", nil)
	if err != nil {
		t.Fatal(err)
	}
	if b := unescapedJSON(t, pr); strings.Contains(string(b), token) || !strings.Contains(string(b), "the key is <redacted>") {
		t.Errorf("the rendered prompt kept the token:\n%s", b)
	}
}

// unescapedJSON is v's JSON with < and > as they are (the SDK's
// marshalers escape them).
func unescapedJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.ReplaceAll(bytes.ReplaceAll(b, []byte(`\u003c`), []byte("<")), []byte(`\u003e`), []byte(">"))
}

// hookWorld is a host whose echo server's calls go through hooks (the
// test binary as the hook program, testserver "hook").
func hookWorld(t *testing.T, hooks ...config.CallHook) (*host.Host, string) {
	t.Helper()
	effect := filepath.Join(t.TempDir(), "effect")
	echo := stdio("echo", "echo", "-side-effect-file", effect)
	return newHost(t, cfgOf(echo), &host.Options{CallHooks: hooks, CloseGrace: hungGrace}), effect
}

func hookCmd(args ...string) config.CallHook {
	cmd, a := testserver.Command("hook", args...)
	return config.CallHook{Name: "check", Command: append([]string{cmd}, a...), Before: true, After: true, TimeoutMs: 20000}
}

// Call hooks: one that denies keeps the tool from running and says why;
// one that hangs, crashes, answers garbage or a newer contract refuses the
// call (fail closed) unless it is set to fail open; an allowing one lets it
// run and sees the arguments and the result; one that redacts replaces
// text of the result; a hook that cannot be read refuses every call.
func TestCallHooks(t *testing.T) {
	ran := func(effect string) bool { _, err := os.Stat(effect); return err == nil }
	call := func(t *testing.T, h *host.Host) *mcp.CallToolResult {
		rep := &host.CallReport{}
		res, err := h.Call(host.WithCallReport(ctxFor(t, 30*time.Second), rep), "mcp__echo__side_effect", map[string]any{"note": "n"})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("report: %+v", rep.Notes())
		return res
	}
	for _, tc := range []struct {
		name    string
		hook    config.CallHook
		runs    bool
		want    string
		failOpn bool
	}{
		{"deny", hookCmd("-mode", "deny", "-reason", "not on Fridays"), false, `The call hook "check" denied this call: not on Fridays`, false},
		{"hang", func() config.CallHook { h := hookCmd("-mode", "hang"); h.TimeoutMs = 300; return h }(), false,
			`the call hook "check" failed (`, false},
		{"crash", hookCmd("-mode", "crash"), false, "exit status 139: hook: segmentation fault (pretend)", false},
		{"garbage", hookCmd("-mode", "garbage"), false, `its answer is not the JSON of the call hook contract`, false},
		{"newer", hookCmd("-mode", "newer"), false, "it answers contract version 2; this Switchboard speaks version 1", false},
		{"crash, fail open", func() config.CallHook { h := hookCmd("-mode", "crash"); h.FailOpen = true; return h }(), true, "side effect recorded", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, effect := hookWorld(t, tc.hook)
			res := call(t, h)
			if got := textOf(res); !strings.Contains(got, tc.want) {
				t.Errorf("result %q lacks %q", got, tc.want)
			}
			if ran(effect) != tc.runs {
				t.Errorf("the tool ran: %v, want %v", ran(effect), tc.runs)
			}
			if !tc.runs {
				if _, blocked := host.Blocked(res); !blocked || !res.IsError {
					t.Error("a refused call is not an isError result Switchboard made")
				}
			}
		})
	}

	t.Run("allow sees the call; redact edits the result", func(t *testing.T) {
		log := filepath.Join(t.TempDir(), "hook.log")
		before := hookCmd("-mode", "allow", "-log", log)
		before.After = false
		after := hookCmd("-mode", "redact", "-redact", "recorded", "-log", log)
		after.Before, after.Name = false, "dlp"
		h, effect := hookWorld(t, before, after)
		res := call(t, h)
		if got := textOf(res); got != "side effect <redacted> (run 1)" || !ran(effect) {
			t.Errorf("result %q, ran %v", got, ran(effect))
		}
		b, _ := os.ReadFile(log)
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(lines) != 2 || !strings.Contains(lines[0], `"phase":"before"`) || !strings.Contains(lines[0], `"arguments":{"note":"n"}`) ||
			!strings.Contains(lines[0], `"tool":"mcp__echo__side_effect"`) || !strings.Contains(lines[1], `"phase":"after"`) ||
			!strings.Contains(lines[1], `side effect recorded (run 1)`) || !strings.Contains(lines[0], `"version":1`) {
			t.Errorf("the hooks saw:\n%s", b)
		}
	})

	t.Run("an unreadable hook refuses every call", func(t *testing.T) {
		effect := filepath.Join(t.TempDir(), "effect")
		h := newHost(t, cfgOf(stdio("echo", "echo", "-side-effect-file", effect)), &host.Options{
			CallHookProblems: []string{`/home/me/.switchboard/settings.json:4:5: "command" names no program`}})
		res := call(t, h)
		if !strings.Contains(textOf(res), `cannot be read (/home/me/.switchboard/settings.json:4:5: "command" names no program)`) || ran(effect) {
			t.Errorf("result %q, ran %v", textOf(res), ran(effect))
		}
	})

	// A "tools" pattern that is not a rule (mcp__ec*) matched no call, so
	// the hook never ran: it failed open, and doctor said it was in force.
	// It is a hook that cannot be read now: every call is refused.
	t.Run("a hook whose tools cannot be read refuses every call", func(t *testing.T) {
		deny := hookCmd("-mode", "deny", "-reason", "never")
		deny.Tools = []string{"mcp__ec*"}
		h, effect := hookWorld(t, deny)
		res := call(t, h)
		if got := textOf(res); !strings.Contains(got, `cannot be read (`) || !strings.Contains(got, `"tools" entry "mcp__ec*" is not a tool pattern`) || ran(effect) {
			t.Errorf("result %q, ran %v", got, ran(effect))
		}
		if hooks, problems := h.CallHooks(); len(hooks) != 0 || len(problems) != 1 {
			t.Errorf("hooks %v, problems %q: want the hook out, as a problem", hooks, problems)
		}
		// Fixed by a reload, it runs.
		deny.Tools = []string{"mcp__echo"}
		h.SetCallHooks([]config.CallHook{deny}, nil)
		if got := textOf(call(t, h)); !strings.Contains(got, `The call hook "check" denied this call: never`) {
			t.Errorf("after the fix: %q", got)
		}
	})
}

// A hook on loopback HTTP: it gets the request as JSON and its answer
// decides; a non-200 answer fails closed; a hook whose name resolves
// elsewhere cannot be reached.
func TestCallHookHTTP(t *testing.T) {
	var got []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/deny":
			fmt.Fprint(w, `{"version": 1, "decision": "deny", "reason": "over budget"}`)
		case "/boom":
			http.Error(w, "boom", http.StatusInternalServerError)
		default:
			fmt.Fprint(w, `{"version": 1, "decision": "allow"}`)
		}
	}))
	defer srv.Close()
	for _, tc := range []struct{ path, want string }{
		{"/allow", "side effect recorded"},
		{"/deny", `The call hook "http" denied this call: over budget`},
		{"/boom", `answered 500 Internal Server Error: "boom"`},
	} {
		h, _ := hookWorld(t, config.CallHook{Name: "http", URL: srv.URL + tc.path, Before: true, TimeoutMs: 5000})
		res := mustCall(t, h, "mcp__echo__side_effect", map[string]any{"note": "n"})
		if !strings.Contains(textOf(res), tc.want) {
			t.Errorf("%s: %q lacks %q", tc.path, textOf(res), tc.want)
		}
		if !strings.Contains(string(got), `"phase":"before"`) {
			t.Errorf("%s: the hook got %s", tc.path, got)
		}
	}
	h, _ := hookWorld(t, config.CallHook{Name: "far", URL: "http://192.0.2.1:80/x", Before: true, TimeoutMs: 5000})
	res := mustCall(t, h, "mcp__echo__side_effect", map[string]any{})
	if !strings.Contains(textOf(res), "a call hook may only be reached on loopback, not 192.0.2.1") {
		t.Errorf("non-loopback hook: %q", textOf(res))
	}
}

// questionLog records the questions a server asks.
type questionLog struct {
	mu    sync.Mutex
	asked []*mcp.ElicitParams
}

func (q *questionLog) Elicit(_ context.Context, _ string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	q.mu.Lock()
	q.asked = append(q.asked, p)
	q.mu.Unlock()
	return &mcp.ElicitResult{Action: "decline"}, nil
}

// The secret values Switchboard gave servers do not reach the model, or a
// gateway's client, through what a server *says about itself* either:
// a tool's title, description, parameter descriptions and enum values and
// annotation title, a prompt's title and description and its arguments'
// (the model reads these at every turn), and a question the server asks
// (shown to a person, or passed on to a gateway's client). Before, only
// results, rendered prompts and progress were scrubbed, and a server that
// built its description or question from its configuration handed its
// token to the model's provider with every request.
func TestSecretsNotInDefinitionsOrQuestions(t *testing.T) {
	const token = "tok_live_1a2b3c4d5e6f7a8b9c0d"
	peer := stdio("peer", "hostile-peer", "-leak", "PEER_API_TOKEN")
	peer.Effective.Env = map[string]string{"PEER_API_TOKEN": token}
	peer.Written.Env = peer.Effective.Env
	asker := stdio("asker", "elicit")
	asker.Effective.Env = map[string]string{"ASKER_API_TOKEN": token}
	asker.Written.Env = asker.Effective.Env
	q := &questionLog{}
	h := newHost(t, cfgOf(peer, asker), &host.Options{Prompter: q})
	ctx := ctxFor(t, 20*time.Second)

	tl, err := h.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var leaky *mcp.Tool
	for _, tool := range tl.Tools {
		if tool.Name == "mcp__peer__leaky" {
			leaky = tool.Tool
		}
	}
	if leaky == nil {
		t.Fatalf("no mcp__peer__leaky in %+v", tl.Tools)
	}
	if b := string(unescapedJSON(t, leaky)); strings.Contains(b, token) ||
		!strings.Contains(b, `"description":"description <redacted>"`) || !strings.Contains(b, `"parameter <redacted>"`) ||
		!strings.Contains(b, `"enum <redacted>"`) || !strings.Contains(b, `"annotation <redacted>"`) || !strings.Contains(b, `"title":"title <redacted>"`) {
		t.Errorf("the tool's definition kept the token, or lost its words:\n%s", b)
	}
	for _, st := range h.Status() {
		if strings.Contains(st.ServerInfo, token) || st.Name == "peer" && !strings.Contains(st.ServerInfo, "<redacted>") {
			t.Errorf("status of %s shows serverInfo %q", st.Name, st.ServerInfo)
		}
	}
	prompts, _, err := h.Prompts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b := string(unescapedJSON(t, prompts)); strings.Contains(b, token) || !strings.Contains(b, "argument <redacted>") ||
		!strings.Contains(b, "leaky_prompt") {
		t.Errorf("the prompt kept the token:\n%s", b)
	}

	form := map[string]any{"type": "object", "properties": map[string]any{
		"key": map[string]any{"type": "string", "title": "paste " + token, "description": "it was " + token}}}
	if _, err := h.Call(ctx, "mcp__asker__ask_form", map[string]any{"message": "your key " + token + " expired", "schema": form}); err != nil {
		t.Fatal(err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.asked) != 1 {
		t.Fatalf("asked %d questions, want 1", len(q.asked))
	}
	if b := string(unescapedJSON(t, q.asked[0])); strings.Contains(b, token) || !strings.Contains(b, "your key <redacted> expired") ||
		!strings.Contains(b, `"title":"paste <redacted>"`) {
		t.Errorf("the question kept the token:\n%s", b)
	}
}

// A server cannot pass its result off as Switchboard's own refusal by
// putting the _meta key Switchboard marks refusals with
// (host.BlockedMetaKey) on it: the key is taken off, host.Blocked says
// no, and the after hooks see the result. Before, such a result skipped
// every after hook — a DLP hook that redacts or withholds results never
// saw it.
func TestServerResultCannotPassForARefusal(t *testing.T) {
	log := filepath.Join(t.TempDir(), "hook.log")
	redact := hookCmd("-mode", "redact", "-redact", "4111-1111-1111-1111", "-log", log)
	redact.Before = false
	h := newHost(t, cfgOf(stdio("peer", "hostile-peer")), &host.Options{CallHooks: []config.CallHook{redact}})
	res := mustCall(t, h, "mcp__peer__fake_blocked", map[string]any{})
	if why, blocked := host.Blocked(res); blocked {
		t.Errorf("the server's result passes for Switchboard's refusal (%q)", why)
	}
	if got := textOf(res); strings.Contains(got, "4111-1111-1111-1111") || !strings.Contains(got, "<redacted>") {
		t.Errorf("the after hook did not redact the result: %q", got)
	}
	if b, err := os.ReadFile(log); err != nil || !strings.Contains(string(b), `"phase":"after"`) {
		t.Errorf("the after hook did not see the result: %v %s", err, b)
	}
}
