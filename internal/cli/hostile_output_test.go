package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/policy"
	"github.com/switchboard-mcp/switchboard/toolsurface"
)

// hostileWorld is a workspace whose servers and repository try to take
// over the terminal: a user server (hostile-output) that puts
// testserver.HostileText into everything it says, the same server failing
// before its handshake (its stderr and reason are shown), and a project
// .mcp.json, in a directory whose very name holds escape sequences, whose
// servers' args, env keys, cwd and URL do.
func hostileWorld(t *testing.T) *rtWorld {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("directory names with control characters")
	}
	w := newRTWorld(t)
	w.proj = filepath.Join(w.work, "repo\x1b]0;title\x07\u202eoper")
	if err := os.MkdirAll(filepath.Join(w.proj, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	w.userServers(map[string]any{
		"hostile": w.server("hostile-output"),
		"dead":    w.server("hostile-output", "-exit"),
	})
	repo := w.server("echo", "--x\x1b[2J\u202e", "\u009b31m")
	// An env key may not hold control characters or '=' (a configuration
	// error of its own); bidi controls are legal in a name, and must still
	// be shown escaped.
	repo["env"] = map[string]any{"K\u202e\u2066X": "v\x1b[1A"}
	repo["cwd"] = "sub\u2066dir"
	w.writeJSON(filepath.Join(w.proj, ".mcp.json"), map[string]any{"mcpServers": map[string]any{
		"repo":   repo,
		"remote": map[string]any{"type": "http", "url": "https://example.com/\u202e\u009b2J/mcp"},
	}})
	return w
}

// rawUnsafe returns the first character of out a terminal would act on or
// hide (newlines and tabs are the output's own), and whether there is one.
func rawUnsafe(out string) (string, bool) {
	for i, r := range out {
		if r == '\n' || r == '\t' {
			continue
		}
		if termsafe.Unsafe(r) || r == '\uFFFD' {
			lo, hi := max(0, i-40), min(len(out), i+40)
			return out[lo:hi], true
		}
	}
	return "", false
}

// checkSafe fails when stdout or stderr of a command holds a raw escape
// sequence, C1 control or bidi character, and, when want is not empty, when
// stdout and stderr together lack the escaped form of one of want: the
// hostile text must have arrived and be shown, not dropped.
func checkSafe(t *testing.T, cmd, stdout, stderr string, want ...string) {
	t.Helper()
	for name, s := range map[string]string{"stdout": stdout, "stderr": stderr} {
		if near, bad := rawUnsafe(s); bad {
			t.Errorf("%s: raw terminal control on %s near %q", cmd, name, near)
		}
	}
	for _, w := range want {
		if !strings.Contains(stdout+stderr, w) {
			t.Errorf("%s: output lacks %q:\nstdout:\n%s\nstderr:\n%s", cmd, w, stdout, stderr)
		}
	}
}

// allowHostile lets call run the hostile server's tools headless.
const allowHostile = `--settings={"permissions":{"allow":["mcp__hostile"]}}`

// escaped is testserver.HostileText as termsafe.Line shows it.
var escaped = termsafe.Line(testserver.HostileText)

// cleanedText is text as toolsurface.CleanText leaves it.
func cleanedText(text string) string {
	out, _ := toolsurface.CleanText(text)
	return out
}

// modelText is testserver.HostileText as the model reads it — tool and
// prompt definitions, resource listings, results and prompt text — its bidi controls made
// visible and its zero-width space removed (docs/security.md, What the
// model reads); modelEscaped is that as termsafe.Line shows it. The
// terminal escaping still has the escape sequences and controls to do.
var (
	modelText, _ = toolsurface.CleanText(testserver.HostileText)
	modelEscaped = termsafe.Line(modelText)
)

func TestHostileOutputRuntimeCommands(t *testing.T) {
	w := hostileWorld(t)
	uri := testserver.HostileResourceURI
	for _, tc := range []struct {
		args []string
		tty  bool
		code int
		want []string
	}{
		{[]string{"status"}, true, 0, []string{`fatal: ` + escaped, `exited`, `repo\x1b]0;title\x07\u202eoper`}},
		{[]string{"status"}, false, 0, []string{`repo\x1b]0;title\x07\u202eoper`}},
		{[]string{"tools"}, true, 0, []string{`description \x1b[2J\x1b[H`}},
		{[]string{"tools"}, false, 0, []string{`description ` + modelEscaped}},
		{[]string{"call", allowHostile, "mcp__hostile__echo_hostile"}, false, 0, []string{`result ` + modelEscaped, "second line\tend"}},
		{[]string{"call", allowHostile, "mcp__hostile__echo_hostile"}, true, 0, []string{`result ` + modelEscaped}},
		// A server's JSON-RPC error is cleaned as result text is (the
		// bidi controls shown, zero-width characters gone), then escaped.
		{[]string{"call", allowHostile, "mcp__hostile__fail_hostile"}, false, 1, []string{termsafe.Line(cleanedText("failure " + testserver.HostileText + "\nhint: a line of its own"))}},
		{[]string{"call", allowHostile, "--log-level", "debug", "mcp__hostile__echo_hostile"}, false, 0, []string{`result ` + modelEscaped}},
		{[]string{"prompts"}, true, 0, []string{`prompt description \x1b[2J`}},
		{[]string{"prompts"}, false, 0, []string{`prompt description ` + modelEscaped}},
		{[]string{"prompt", "/hostile:hostile_prompt", "--arg", "topic=x"}, false, 0, []string{`prompt ` + modelEscaped + "\nabout x"}},
		{[]string{"prompt", "/hostile:hostile_prompt"}, false, 2, []string{"topic"}},
		{[]string{"resources"}, true, 0, []string{`title \x1b[2J\x1b[H`}},
		{[]string{"resources"}, false, 0, []string{`title ` + modelEscaped}}, // a listing is read as a tool's words
		{[]string{"read", "@hostile:" + uri}, true, 0, []string{`resource ` + escaped + "\nline two\n"}},
		{[]string{"read", "@hostile:nope\x1b[2J"}, false, 2, []string{`nope\x1b[2J`}},
		{[]string{"doctor"}, true, 1, []string{`fatal: ` + escaped, `--x\x1b[2J\u202e`, `repo\x1b]0;title`}},
		{[]string{"doctor"}, false, 1, []string{`fatal: \x1b[2J\x1b[H`, `repo\x1b]0;title`}},
		{[]string{"mcp", "list"}, true, 0, []string{`repo\x1b]0;title\x07\u202eoper`, `\u202e`}},
		{[]string{"mcp", "list"}, false, 0, []string{`repo\x1b]0;title\x07\u202eoper`}},
		{[]string{"mcp", "get", "repo"}, true, 0, []string{`--x\x1b[2J\u202e`}},
		{[]string{"mcp", "get", "remote"}, false, 0, []string{`\u202e`}},
		{[]string{"__complete", "prompt", "/hos"}, false, 0, []string{`prompt description \x1b[2J\x1b[H`}},
		{[]string{"__complete", "prompt", "/hostile:hostile_prompt", "--arg", ""}, false, 0, []string{"topic=\targument \\x1b[2J\\x1b[H"}},
	} {
		name := strings.Join(tc.args, " ")
		if tc.tty {
			name += " (tty)"
		}
		t.Run(name, func(t *testing.T) {
			out, errOut, code := w.run(tc.tty, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errOut)
			}
			checkSafe(t, name, out, errOut, tc.want...)
		})
	}
}

// Piped, `read` prints a text resource as the data it is, like a blob:
// byte for byte what the server sent (documented in docs/security.md).
func TestHostileOutputReadPipedIsData(t *testing.T) {
	w := hostileWorld(t)
	out, errOut, code := w.run(false, "read", "@hostile:"+testserver.HostileResourceURI)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if want := "resource " + testserver.HostileText + "\nline two\n"; out != want {
		t.Errorf("read piped = %q, want the server's text %q", out, want)
	}
}

// --json keeps every string exactly (it decodes to what the server sent,
// or for what the model reads, to what the model reads) and still never puts a raw control or bidi character on the terminal:
// encoding/json escapes C0, printJSON the rest.
func TestHostileOutputJSON(t *testing.T) {
	w := hostileWorld(t)
	for _, args := range [][]string{
		{"status", "--json"},
		{"tools", "--json"},
		{"call", allowHostile, "--json", "mcp__hostile__echo_hostile"},
		{"prompts", "--json"},
		{"resources", "--json"},
		{"doctor", "--json"},
		{"mcp", "list", "--json"},
	} {
		name := strings.Join(args, " ")
		t.Run(name, func(t *testing.T) {
			out, errOut, _ := w.run(false, args...)
			checkSafe(t, name, out, errOut, `\u001b`)
			var v any
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, out)
			}
		})
	}
	out, _, _ := w.run(false, "tools", "--json")
	var tools []toolJSON
	if err := json.Unmarshal([]byte(out), &tools); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tl := range tools {
		if tl.Tool == "echo_hostile" {
			found = true
			if want := "title " + modelText; tl.Title != want {
				t.Errorf("title decodes to %q, want %q", tl.Title, want)
			}
		}
	}
	if !found {
		t.Errorf("echo_hostile not listed:\n%s", out)
	}
}

func TestEscapeJSON(t *testing.T) {
	for in, want := range map[string]string{
		`{"a": "plain ☕ text"}`:  `{"a": "plain ☕ text"}`,
		"\"\u009b2J\u202e\x7f\"": `"\u009b2J\u202e\u007f"`,
		"\"\U000E0041\"":         `"\udb40\udc41"`,
		"\"\xff\"":               "\"\uFFFD\"",
	} {
		got := string(escapeJSON([]byte(in)))
		if got != want {
			t.Errorf("escapeJSON(%q) = %q, want %q", in, got, want)
		}
		var a, b any
		if json.Unmarshal([]byte(in), &a) == nil {
			if err := json.Unmarshal([]byte(got), &b); err != nil {
				t.Errorf("escapeJSON(%q) is not JSON: %v", in, err)
			}
		}
	}
}

// The live progress line draws server text (progress messages, names):
// escaped like everything else.
func TestLiveLineEscapes(t *testing.T) {
	var b bytes.Buffer
	l := newLiveLine(&b, true)
	l.render = func() string {
		return "calling x…" + progressText(&mcp.ProgressNotificationParams{Progress: 1, Message: "step\x1b]0;t\x07\u202e"})
	}
	l.draw()
	got := strings.TrimPrefix(b.String(), "\r\x1b[K")
	if near, bad := rawUnsafe(got); bad {
		t.Errorf("live line draws a raw control near %q", near)
	}
	if !strings.Contains(got, `step\x1b]0;t\x07\u202e`) {
		t.Errorf("live line = %q, want the escaped message", got)
	}
}

// The questions a server or a repository gets asked on the terminal —
// elicitation, the permission question — are where overwriting the screen
// pays most: what the server wrote is shown escaped, never drawn.
func TestHostileQuestions(t *testing.T) {
	h := testserver.HostileText
	t.Run("elicitation", func(t *testing.T) {
		ios, in, _, errOut := Test()
		in.WriteString("y\n1\n")
		p := &termPrompter{in: newLineReader(ios.In), out: errOut, line: newLiveLine(errOut, false)}
		schema, _ := json.Marshal(map[string]any{"type": "object", "required": []string{"pick"},
			"properties": map[string]any{"pick": map[string]any{"type": "string", "title": "pick" + h,
				"description": "desc" + h, "enum": []string{"a" + h}, "enumNames": []string{"A" + h}}}})
		_, err := p.Elicit(context.Background(), "srv", &mcp.ElicitParams{Message: "question\n" + h, RequestedSchema: json.RawMessage(schema)})
		if err != nil {
			t.Fatal(err)
		}
		checkSafe(t, "elicit", "", errOut.String(), "srv │ question\n  srv │ "+escaped, "srv │ pick"+escaped, "srv │ A"+escaped)
	})
	t.Run("url elicitation", func(t *testing.T) {
		ios, in, _, errOut := Test()
		in.WriteString("n\n")
		p := &termPrompter{in: newLineReader(ios.In), out: errOut, line: newLiveLine(errOut, false)}
		if _, err := p.Elicit(context.Background(), "srv", &mcp.ElicitParams{Mode: "url", Message: "open", URL: "https://x/" + h}); err != nil {
			t.Fatal(err)
		}
		checkSafe(t, "url elicit", "", errOut.String(), "srv │ https://x/"+escaped)
	})
	t.Run("headless", func(t *testing.T) {
		var b bytes.Buffer
		p := &headlessPrompter{w: &b, line: newLiveLine(&b, false)}
		_, _ = p.Elicit(context.Background(), "srv", &mcp.ElicitParams{Message: "m" + h})
		checkSafe(t, "headless elicit", "", b.String(), `m\x1b[2J`)
	})
	t.Run("permission", func(t *testing.T) {
		ios, in, _, errOut := Test()
		in.WriteString("d\n")
		a := &termAsker{in: newLineReader(ios.In), out: errOut, line: newLiveLine(errOut, false)}
		_, err := a.AskPermission(context.Background(),
			host.PermitRequest{Tool: "mcp__s__t" + h, Args: map[string]any{"path": "/tmp/" + h}},
			policy.Decision{Reason: "because" + h})
		if err != nil {
			t.Fatal(err)
		}
		checkSafe(t, "permission", "", errOut.String(), "mcp__s__t"+escaped, "because"+escaped, `/tmp/\u001b[2J`)
	})
}

// A workspace's .vscode/mcp.json is the repository's too: `mcp import`
// reports its names, notes and reasons escaped.
func TestHostileOutputImport(t *testing.T) {
	w := hostileWorld(t)
	h := testserver.HostileText
	b, _ := json.Marshal(map[string]any{"servers": map[string]any{
		"bad" + h: map[string]any{"command": "x"},
		"input":   map[string]any{"command": "x", "env": map[string]any{"K": "${input:" + h + "}"}},
		"extra":   map[string]any{"command": "x", "envFile" + h: "y"},
	}})
	if err := os.MkdirAll(filepath.Join(w.proj, ".vscode"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.proj, ".vscode", "mcp.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tty := range []bool{false, true} {
		out, errOut, _ := w.run(tty, "mcp", "import", "--from", "vscode")
		checkSafe(t, "mcp import", out, errOut, `bad\x1b[2J`, `input:\u001b[2J`, `repo\x1b]0;title`)
	}
}

// The management commands name the workspace — a directory whose name the
// repository chose — in what they print.
func TestHostileOutputManagement(t *testing.T) {
	w := hostileWorld(t)
	for _, args := range [][]string{
		{"mcp", "add", "--scope", "local", "mine", "--", "true"},
		{"mcp", "add", "--scope", "project", "theirs", "--", "true"},
		{"mcp", "disable", "mine"},
		{"mcp", "enable", "mine"},
		{"mcp", "remove", "--scope", "local", "mine"},
		{"mcp", "approve", "repo", "--yes"},
		{"mcp", "approve", "repo", "--yes"}, // already approved
		{"mcp", "revoke", "repo"},
		{"mcp", "approve", "repo", "--yes"},
		{"mcp", "reset-project-choices"},
	} {
		name := strings.Join(args, " ")
		out, errOut, code := w.run(false, args...)
		if code != 0 {
			t.Errorf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", name, code, out, errOut)
		}
		checkSafe(t, name, out, errOut, `repo\x1b]0;title`)
	}
}

// blankChars show as nothing or as blank space, yet are graphic: the
// Hangul fillers, the combining grapheme joiner, variation selectors, the
// braille blank, Khmer's invisible vowels. An arg holding one reads the
// same as one without it.
var blankChars = []rune{0x3164, 0x115F, 0x1160, 0xFFA0, 0x034F, 0xFE00, 0xFE0F, 0xE0100, 0xE01EF, 0x2800, 0x17B4, 0x17B5}

// Every place that shows a repository's command line — the approval
// review, mcp get, doctor's "would run" and the status COMMAND column —
// shows each blank character escaped in $'…' form, never raw
// (docs/security.md, The approval review).
func TestHostileOutputBlankCharacters(t *testing.T) {
	w := newRTWorld(t)
	repo := w.server("echo")
	args := repo["args"].([]string)
	var want []string
	for _, r := range blankChars {
		args = append(args, "x"+string(r)+"y")
		if r > 0xffff {
			want = append(want, fmt.Sprintf(`$'x\U%08xy'`, r))
		} else {
			want = append(want, fmt.Sprintf(`$'x\u%04xy'`, r))
		}
	}
	repo["args"] = args
	w.writeJSON(filepath.Join(w.proj, ".mcp.json"), map[string]any{"mcpServers": map[string]any{"repo": repo}})
	check := func(name, out, errOut string) {
		t.Helper()
		for _, r := range blankChars {
			if i := strings.IndexRune(out+errOut, r); i >= 0 {
				t.Errorf("%s: %U shown raw:\nstdout:\n%s\nstderr:\n%s", name, r, out, errOut)
			}
		}
		checkSafe(t, name, out, errOut, want...)
	}
	for _, tc := range []struct {
		args []string
		tty  bool
	}{
		{[]string{"mcp", "approve", "repo"}, false}, // the review, then no terminal to ask on
		{[]string{"mcp", "get", "repo"}, false},
		{[]string{"doctor"}, true},
		{[]string{"mcp", "approve", "repo", "--yes"}, false},
		{[]string{"status"}, false}, // piped: with the COMMAND column
	} {
		name := strings.Join(tc.args, " ")
		out, errOut, _ := w.run(tc.tty, tc.args...)
		check(name, out, errOut)
	}
}
