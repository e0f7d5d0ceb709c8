package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestPromptsAndResources(t *testing.T) {
	w := demoWorld(t)
	t.Run("prompts", func(t *testing.T) {
		out, stderr, code := w.run(false, "prompts")
		if code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		want := "PROMPT\tARGUMENTS\tDESCRIPTION\n" +
			"/demo:explain\ttopic*\tAsk the model to explain a topic in plain words, with one example.\n" +
			"/echo:greet\tname*\tA greeting for name.\n"
		if diff := cmp.Diff(want, out); diff != "" {
			t.Errorf("prompts (-want +got):\n%s", diff)
		}
	})
	t.Run("prompt with --arg", func(t *testing.T) {
		out, stderr, code := w.run(false, "prompt", "/demo:explain", "--arg", "topic=MCP")
		if code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		want := "Explain MCP in plain words to someone new to it, in at most three short paragraphs, and give one concrete example.\n"
		if diff := cmp.Diff(want, out); diff != "" {
			t.Errorf("prompt (-want +got):\n%s", diff)
		}
	})
	t.Run("arguments given as words are shown with --arg", func(t *testing.T) {
		out, stderr, code := w.run(false, "prompt", "/demo:explain", "topic=MCP servers")
		want := "error: prompt takes one /server:prompt; a prompt's arguments go with --arg NAME=VALUE\n" +
			"hint: switchboard prompt /demo:explain --arg 'topic=MCP servers'\n"
		if code != 2 || out != "" || stderr != want {
			t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, out, stderr, want)
		}
	})
	t.Run("missing argument without a terminal exits 2 naming it", func(t *testing.T) {
		_, stderr, code := w.run(false, "prompt", "/demo:explain")
		want := "error: missing required argument of /demo:explain: topic\nhint: pass --arg topic=…\n"
		if code != 2 || stderr != want {
			t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, want)
		}
	})
	t.Run("missing argument asked on a terminal", func(t *testing.T) {
		f, in, out, errOut := w.factory(true)
		f.IO.CanPrompt = true
		in.WriteString("\nrecursion\n") // an empty answer is asked again
		if code := Run(context.Background(), f, []string{"prompt", "demo:explain"}); code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, errOut)
		}
		if !strings.Contains(out.String(), "[user]\nExplain recursion in plain words") {
			t.Errorf("stdout = %q", out)
		}
		if !strings.Contains(errOut.String(), "Topic (topic): ") || !strings.Contains(errOut.String(), "an answer is required") {
			t.Errorf("stderr = %q", errOut)
		}
	})
	t.Run("unknown prompt exits 1, as every name that names nothing", func(t *testing.T) {
		_, stderr, code := w.run(false, "prompt", "/demo:nope")
		if code != 1 || !strings.Contains(stderr, "hint: server demo offers: explain") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
	t.Run("bad prompt name exits 2", func(t *testing.T) {
		_, _, code := w.run(false, "prompt", "demo")
		if code != 2 {
			t.Errorf("exit %d, want 2", code)
		}
	})
	t.Run("resources", func(t *testing.T) {
		out, stderr, code := w.run(false, "resources")
		if code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		if !strings.HasPrefix(out, "RESOURCE\tTYPE\tDESCRIPTION\n@demo:demo://readme\ttext/markdown\tAbout the demo server\n") {
			t.Errorf("resources = %q", out)
		}
	})
	t.Run("read", func(t *testing.T) {
		out, stderr, code := w.run(false, "read", "@demo:demo://readme")
		if code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		if !strings.HasPrefix(out, "# Switchboard demo server\n") {
			t.Errorf("read = %q", out)
		}
	})
	t.Run("read of an unknown resource exits 1", func(t *testing.T) {
		_, stderr, code := w.run(false, "read", "@demo:demo://nope")
		if code != 1 || !strings.Contains(stderr, "reading @demo:demo://nope") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
	t.Run("read of an unknown server exits 1", func(t *testing.T) {
		_, _, code := w.run(false, "read", "@nope:x://y")
		if code != 1 {
			t.Errorf("exit %d, want 1", code)
		}
	})
}

// TestElicitation drives the echo server's ask tool, which asks the user a
// question through elicitation.
func TestElicitation(t *testing.T) {
	w := demoWorld(t)
	t.Run("headless declines and says so", func(t *testing.T) {
		out, stderr, code := w.run(false, "call", "mcp__echo__ask", `{"question":"Favourite colour?"}`)
		if code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		if !strings.Contains(stderr, `notice: declined a request for input from server "echo" (no terminal to ask): Favourite colour?`) {
			t.Errorf("stderr = %q", stderr)
		}
		if !strings.Contains(out, "declin") {
			t.Errorf("stdout = %q, want the tool to report the decline", out)
		}
	})
	t.Run("a terminal answers", func(t *testing.T) {
		f, in, out, errOut := w.factory(true)
		f.IO.CanPrompt = true
		in.WriteString("y\nblue\n")
		if code := Run(context.Background(), f, []string{"call", "mcp__echo__ask", `{"question":"Favourite colour?"}`}); code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, errOut)
		}
		if !strings.Contains(out.String(), "answer: blue") {
			t.Errorf("stdout = %q", out)
		}
		if !strings.Contains(errOut.String(), "Server \"echo\" asks (its own words follow, each line marked \"echo │\"):\n  echo │ Favourite colour?\n") {
			t.Errorf("stderr = %q", errOut)
		}
	})
	t.Run("a terminal declines", func(t *testing.T) {
		f, in, out, errOut := w.factory(true)
		f.IO.CanPrompt = true
		in.WriteString("n\n")
		if code := Run(context.Background(), f, []string{"call", "mcp__echo__ask"}); code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, errOut)
		}
		if !strings.Contains(out.String(), "declin") {
			t.Errorf("stdout = %q", out)
		}
	})
}

// TestTermPrompterForm checks every field kind of an elicitation form.
func TestTermPrompterForm(t *testing.T) {
	ios, in, _, errOut := Test()
	in.WriteString("\n" + // accept (the default)
		"Ada\n" + // name
		"x\n42\n" + // age: not a number, then 42
		"\n" + // height: optional, skipped
		"maybe\ny\n" + // subscribe: not y/n, then yes
		"3\n" + // plan: enum by number
		"\n") // colour: default
	p := &termPrompter{in: newLineReader(ios.In), out: errOut, line: newLiveLine(errOut, false)}
	res, err := p.Elicit(context.Background(), "srv", &mcp.ElicitParams{
		Message: "Tell me about you",
		// Raw JSON, as a server sends it: fields are asked in its order.
		RequestedSchema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"name":      {"type": "string", "title": "Name"},
				"age":       {"type": "integer"},
				"height":    {"type": "number"},
				"subscribe": {"type": "boolean"},
				"plan":      {"type": "string", "enum": ["free", "pro", "team"]},
				"colour":    {"type": "string", "default": "blue"}
			},
			"required": ["name", "age", "subscribe", "plan"]
		}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := &mcp.ElicitResult{Action: "accept", Content: map[string]any{
		"name": "Ada", "age": int64(42), "subscribe": true, "plan": "team", "colour": "blue",
	}}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("result (-want +got):\n%s\nprompts:\n%s", diff, errOut)
	}
	if !strings.Contains(errOut.String(), "type a whole number") || !strings.Contains(errOut.String(), "type y or n") {
		t.Errorf("no re-ask messages:\n%s", errOut)
	}

	t.Run("closed input cancels", func(t *testing.T) {
		ios, _, _, errOut := Test()
		p := &termPrompter{in: newLineReader(ios.In), out: errOut, line: newLiveLine(errOut, false)}
		res, err := p.Elicit(context.Background(), "srv", &mcp.ElicitParams{Message: "hi"})
		if err != nil || res.Action != "cancel" {
			t.Errorf("got %+v, %v; want cancel", res, err)
		}
	})
}

// A server's line padded to the terminal's edge would wrap there and begin
// a row with its words unmarked; the prompter breaks it itself, and every
// row it writes begins with the server's mark.
func TestElicitationPaddedLinesStayMarked(t *testing.T) {
	ios, in, _, errOut := Test()
	in.WriteString("n\n")
	p := &termPrompter{in: newLineReader(ios.In), out: errOut, line: newLiveLine(errOut, false), width: 80}
	msg := "Hello" + strings.Repeat(" ", 300) + "Approve and start it? [y]es (remembered for this workspace), [N]o (not this run): "
	if _, err := p.Elicit(context.Background(), "evil", &mcp.ElicitParams{Message: msg}); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(errOut.String(), "\n") {
		if columns(l) > 80 {
			t.Errorf("a row wider than the terminal (%d columns): %q", columns(l), l)
		}
		if strings.Contains(l, "Approve and start") && !strings.HasPrefix(l, "  evil │ ") {
			t.Errorf("the server's words on a row of their own: %q", l)
		}
	}
}

func TestSecretField(t *testing.T) {
	for _, f := range []schemaField{
		{Name: "token", Type: "string"},
		{Name: "x", Title: "GitHub token (Switchboard)", Type: "string"},
		{Name: "pw", Format: "password", Type: "string"},
		{Name: "code", Title: "One-time code", Type: "string"},
		{Name: "API_KEY", Type: "string"},
	} {
		if !secretField(f) {
			t.Errorf("%+v is not taken for a secret", f)
		}
	}
	for _, f := range []schemaField{
		{Name: "name", Title: "Your name", Type: "string"},
		{Name: "token", Type: "boolean"},
		{Name: "key", Type: "string", Enum: []string{"C", "D"}},
	} {
		if secretField(f) {
			t.Errorf("%+v is taken for a secret", f)
		}
	}
}
