package testserver

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The demo server is what `switchboard demo` starts: the first MCP server
// many users see. Everything it does is offline and deterministic.
func init() {
	register("demo", serverDef{
		doc:       "the bundled example for `switchboard demo`: tools echo, add, word_count, roll_dice; prompt explain; resource demo://readme",
		inProcess: true,
		setup: func(fs *flag.FlagSet, p *proc) func(context.Context) error {
			p.build = newDemoServer
			return p.buildAndServe
		},
	})
}

type (
	demoEchoIn struct {
		Text string `json:"text" jsonschema:"The text to send back."`
	}
	demoAddIn struct {
		A float64 `json:"a" jsonschema:"The first number."`
		B float64 `json:"b" jsonschema:"The second number."`
	}
	demoAddOut struct {
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

const demoReadme = `# Switchboard demo server

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

func newDemoServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "switchboard-demo", Title: "Switchboard demo", Version: "v1.0.0"},
		&mcp.ServerOptions{
			Instructions: "A small offline example server bundled with Switchboard. Its tools are safe, read-only and deterministic.",
			Capabilities: &mcp.ServerCapabilities{}, // no logging: the demo has nothing to log
		})
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: boolPtr(false)}

	mcp.AddTool(s, &mcp.Tool{
		Name:        "echo",
		Title:       "Echo",
		Description: "Return the given text unchanged. Useful to check that a connection works end to end.",
		Annotations: readOnly,
	}, func(_ context.Context, _ *mcp.CallToolRequest, in demoEchoIn) (*mcp.CallToolResult, any, error) {
		return text(in.Text), nil, nil
	})

	mcp.AddTool(s, &mcp.Tool{
		Name:        "add",
		Title:       "Add two numbers",
		Description: "Add two numbers and return their sum.",
		Annotations: readOnly,
	}, func(_ context.Context, _ *mcp.CallToolRequest, in demoAddIn) (*mcp.CallToolResult, demoAddOut, error) {
		sum := in.A + in.B
		return text(fmt.Sprintf("%v + %v = %v", in.A, in.B, sum)), demoAddOut{Sum: sum}, nil
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
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "demo://readme", MIMEType: "text/markdown", Text: demoReadme}}}, nil
	})
	return s
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
