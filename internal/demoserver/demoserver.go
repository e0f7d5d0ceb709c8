// Package demoserver is the one MCP server the switchboard binary carries:
// the small offline example that `switchboard demo` starts as a real child
// process, so that a new user sees the whole chain (config, trust, connect,
// tools, call, envelope) without installing anything.
//
// The binary runs it through a hidden first argument: main calls [MaybeRun]
// before anything else, and [Command] returns the argv that re-executes the
// current binary as the server. [New] builds the same server for in-process
// use. Every tool is read-only and deterministic.
//
// The servers the tests use to crash, hang and flood live in
// internal/testserver, which the production binary never links (the
// internal/archtest rules keep it so); this package is the only server that
// ships.
package demoserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/jsonl"
)

// Arg is the first argument that makes [MaybeRun] serve the demo instead of
// running the program's normal main.
const Arg = "__switchboard-demo-server"

// MaybeRun serves the demo on stdin and stdout and exits if the process was
// started by [Command] (os.Args[1] == [Arg]); otherwise it returns at once.
// Call it first in main. The exit status is 0 when the client closes stdin,
// 1 with a message on stderr if serving fails, and 2 if arguments follow
// [Arg] (the demo takes none).
func MaybeRun() {
	if len(os.Args) < 2 || os.Args[1] != Arg {
		return
	}
	if len(os.Args) > 2 {
		fmt.Fprintf(os.Stderr, "demoserver: %s takes no arguments, got %q\n", Arg, os.Args[2:])
		os.Exit(2)
	}
	// Stdin through the runtime's poller, not a blocking read(2): see
	// jsonl.Stdin for why a Go 1.26 process reading a pipe must.
	in, restore := jsonl.Stdin()
	err := Serve(context.Background(), in, os.Stdout)
	restore()
	if err != nil {
		fmt.Fprintf(os.Stderr, "demoserver: %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Command returns the program and arguments that run the demo as a child
// process: the current executable and [Arg]. The executable must call
// [MaybeRun] first. It fails only if the executable cannot be found.
func Command() (string, []string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", nil, fmt.Errorf("finding the switchboard executable for the demo server: %w", err)
	}
	return exe, []string{Arg}, nil
}

// Serve runs the demo server speaking newline-delimited JSON-RPC over in and
// out until the client closes in (nil) or ctx ends (nil as well: both are
// the normal end of a stdio server).
func Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	t := &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}}
	err := New().Run(ctx, t)
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

type (
	echoIn struct {
		Text string `json:"text" jsonschema:"The text to send back."`
	}
	addIn struct {
		A float64 `json:"a" jsonschema:"The first number."`
		B float64 `json:"b" jsonschema:"The second number."`
	}
	addOut struct {
		Sum float64 `json:"sum" jsonschema:"a + b"`
	}
	wordCountIn struct {
		Text string `json:"text" jsonschema:"The text to count."`
	}
	wordCountOut struct {
		Words      int `json:"words" jsonschema:"Runs of letters or digits separated by anything else."`
		Lines      int `json:"lines" jsonschema:"Lines of text; a last line without a newline counts."`
		Characters int `json:"characters" jsonschema:"Unicode characters, spaces included."`
	}
	rollDiceIn struct {
		Count int    `json:"count,omitempty" jsonschema:"How many dice to roll, 1 to 100. Default 2."`
		Sides int    `json:"sides,omitempty" jsonschema:"Sides on each die, 2 to 1000. Default 6."`
		Seed  uint64 `json:"seed,omitempty" jsonschema:"Seed for the roll: the same seed always gives the same dice. Default 42."`
	}
	rollDiceOut struct {
		Rolls []int `json:"rolls" jsonschema:"Each die's face, in the order rolled."`
		Total int   `json:"total" jsonschema:"The sum of the rolls."`
	}
)

// Readme is the text of the server's one resource, demo://readme.
const Readme = `# Switchboard demo server

This server ships inside the switchboard binary so that ` + "`switchboard demo`" + ` can show the
whole chain — config, trust, connect, tools, call, envelope — without installing anything.

Tools:
- echo: returns your text unchanged.
- add: adds two numbers.
- word_count: counts words, lines and characters.
- roll_dice: rolls dice from a seed, so the same seed always gives the same result.

Prompt:
- explain: asks the model to explain a topic simply.

Everything here runs offline and gives the same answer every time.
`

// New builds the demo server: tools echo, add, word_count and roll_dice,
// the prompt explain and the resource demo://readme. Each call returns a
// new server; it is safe to serve them concurrently.
func New() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "switchboard-demo", Title: "Switchboard demo", Version: "v1.0.0"},
		&mcp.ServerOptions{
			Instructions: "A small offline example server bundled with Switchboard. Its tools are safe, read-only and deterministic.",
			Capabilities: &mcp.ServerCapabilities{}, // no logging: the demo has nothing to log
		})
	closedWorld := false
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &closedWorld}

	mcp.AddTool(s, &mcp.Tool{
		Name:        "echo",
		Title:       "Echo",
		Description: "Return the given text unchanged. Useful to check that a connection works end to end.",
		Annotations: readOnly,
	}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return text(in.Text), nil, nil
	})

	mcp.AddTool(s, &mcp.Tool{
		Name:        "add",
		Title:       "Add two numbers",
		Description: "Add two numbers and return their sum.",
		Annotations: readOnly,
	}, func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
		sum := in.A + in.B
		return text(fmt.Sprintf("%v + %v = %v", in.A, in.B, sum)), addOut{Sum: sum}, nil
	})

	mcp.AddTool(s, &mcp.Tool{
		Name:        "word_count",
		Title:       "Count words",
		Description: "Count the words, lines and characters in a piece of text.",
		Annotations: readOnly,
	}, func(_ context.Context, _ *mcp.CallToolRequest, in wordCountIn) (*mcp.CallToolResult, wordCountOut, error) {
		out := countWords(in.Text)
		return text(fmt.Sprintf("%d words, %d lines, %d characters", out.Words, out.Lines, out.Characters)), out, nil
	})

	mcp.AddTool(s, &mcp.Tool{
		Name:        "roll_dice",
		Title:       "Roll dice",
		Description: "Roll dice with a given number of sides. Deterministic: the same seed always gives the same rolls.",
		Annotations: readOnly,
	}, func(_ context.Context, _ *mcp.CallToolRequest, in rollDiceIn) (*mcp.CallToolResult, rollDiceOut, error) {
		count, sides, seed := in.Count, in.Sides, in.Seed
		if count == 0 {
			count = 2
		}
		if sides == 0 {
			sides = 6
		}
		if seed == 0 {
			seed = 42
		}
		if count < 1 || count > 100 {
			return nil, rollDiceOut{}, fmt.Errorf("count must be between 1 and 100, not %d", count)
		}
		if sides < 2 || sides > 1000 {
			return nil, rollDiceOut{}, fmt.Errorf("sides must be between 2 and 1000, not %d", sides)
		}
		out := rollDice(count, sides, seed)
		return text(fmt.Sprintf("rolled %dd%d (seed %d): %v = %d", count, sides, seed, out.Rolls, out.Total)), out, nil
	})

	s.AddPrompt(&mcp.Prompt{
		Name:        "explain",
		Title:       "Explain a topic",
		Description: "Ask the model to explain a topic in plain words, with one example.",
		Arguments:   []*mcp.PromptArgument{{Name: "topic", Title: "Topic", Description: "What to explain, e.g. \"MCP\".", Required: true}},
	}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		topic := strings.TrimSpace(req.Params.Arguments["topic"])
		if topic == "" {
			return nil, fmt.Errorf("the topic argument is required")
		}
		return &mcp.GetPromptResult{
			Description: "Explain " + topic,
			Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{
				Text: fmt.Sprintf("Explain %s in plain words to someone new to it, in at most three short paragraphs, and give one concrete example.", topic),
			}}},
		}, nil
	})

	s.AddResource(&mcp.Resource{
		URI:         "demo://readme",
		Name:        "readme",
		Title:       "About the demo server",
		Description: "What this server offers and why it exists.",
		MIMEType:    "text/markdown",
	}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "demo://readme", MIMEType: "text/markdown", Text: Readme}}}, nil
	})
	return s
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func countWords(s string) wordCountOut {
	var out wordCountOut
	inWord := false
	for _, r := range s {
		out.Characters++
		if r == '\n' {
			out.Lines++
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' {
			if !inWord {
				out.Words++
			}
			inWord = true
		} else {
			inWord = false
		}
	}
	if s != "" && !strings.HasSuffix(s, "\n") {
		out.Lines++
	}
	return out
}

func rollDice(count, sides int, seed uint64) rollDiceOut {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	out := rollDiceOut{Rolls: make([]int, count)}
	for i := range out.Rolls {
		out.Rolls[i] = 1 + r.IntN(sides)
	}
	for _, v := range out.Rolls {
		out.Total += v
	}
	return out
}
