package testserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SideEffectEnv names the environment variable holding the file that the
// side_effect tools append one line to per run. The -side-effect-file flag
// overrides it.
const SideEffectEnv = "SIDE_EFFECT_FILE"

func init() {
	register("echo", serverDef{
		doc: "the workhorse: echo, add, slow (progress, cancellation), side_effect, idempotent_side_effect, " +
			"destructive, log, ask (elicitation), sample (sampling), roots, add_tool/add_prompt/add_resource " +
			"(list_changed), big, image, error_result, env, cwd, pid, stderr, headers; prompt greet; resource test://echo/readme",
		inProcess: true,
		setup: func(fs *flag.FlagSet, p *proc) func(context.Context) error {
			cfg := echoFlags(fs, p)
			p.build = func() *mcp.Server { return newEchoServer("echo", cfg, p) }
			return p.buildAndServe
		},
	})
}

type echoConfig struct {
	sideEffectFile *string
	instructions   *string
	extraTool      *string
	protocol       *string
	effectHold     *time.Duration
}

func echoFlags(fs *flag.FlagSet, p *proc) *echoConfig {
	fs.StringVar(&p.pidFile, "pid-file", "", "append this process's pid to this file when it starts serving (for reaping tests)")
	return &echoConfig{
		sideEffectFile: fs.String("side-effect-file", "", "file the side_effect tools append to (default $"+SideEffectEnv+")"),
		instructions:   fs.String("instructions", "", "server instructions sent at initialize"),
		extraTool:      fs.String("tool", "", `also serve a tool of this name, answering "<name>: <text>" (for name-collision tests)`),
		protocol:       fs.String("protocol", "", "speak only this protocol revision (2025-11-25: what most servers speak today)"),
		effectHold:     fs.Duration("side-effect-hold", 0, "side_effect tools: wait this long after recording a run before answering (a tool with more work after its effect: a kill then cuts calls that ran)"),
	}
}

func (c *echoConfig) effectFile() string {
	if c != nil && *c.sideEffectFile != "" {
		return *c.sideEffectFile
	}
	return os.Getenv(SideEffectEnv)
}

func boolPtr(b bool) *bool { return &b }

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func errorResult(s string) *mcp.CallToolResult {
	r := text(s)
	r.IsError = true
	return r
}

// Inputs of the echo server's tools. Field tags give the schema descriptions.
type (
	echoIn struct {
		Text string `json:"text" jsonschema:"the text to return unchanged"`
	}
	addIn struct {
		A float64 `json:"a" jsonschema:"the first addend"`
		B float64 `json:"b" jsonschema:"the second addend"`
	}
	slowIn struct {
		Ms    int `json:"ms,omitempty" jsonschema:"how long to sleep, in milliseconds (default 1000)"`
		Steps int `json:"steps,omitempty" jsonschema:"how many progress notifications to send if the call has a progress token (default 5)"`
	}
	sideEffectIn struct {
		Note string `json:"note,omitempty" jsonschema:"text recorded on the line appended for this run"`
	}
	destructiveIn struct {
		Target string `json:"target,omitempty" jsonschema:"what to pretend to delete"`
	}
	logIn struct {
		Level   string `json:"level,omitempty" jsonschema:"the logging level: debug, info, notice, warning, error, critical, alert or emergency (default info)"`
		Message string `json:"message,omitempty" jsonschema:"the message to log (default 'hello from the log tool')"`
	}
	askIn struct {
		Question string `json:"question,omitempty" jsonschema:"the question to put to the user"`
	}
	sampleIn struct {
		Prompt string `json:"prompt,omitempty" jsonschema:"what to ask the client's model"`
	}
	nameIn struct {
		Name string `json:"name,omitempty" jsonschema:"the name of the new item (default: generated)"`
	}
	bigIn struct {
		Bytes int `json:"bytes,omitempty" jsonschema:"how many bytes of text to return (default 100000)"`
	}
	errorIn struct {
		Message string `json:"message,omitempty" jsonschema:"the error text (default 'something went wrong')"`
	}
	envIn struct {
		Names []string `json:"names" jsonschema:"environment variable names to look up"`
		Hex   bool     `json:"hex,omitempty" jsonschema:"answer hex-encoded"`
	}
	headersIn struct {
		Hex bool `json:"hex,omitempty" jsonschema:"answer hex-encoded"`
	}
	stderrIn struct {
		Text string `json:"text" jsonschema:"the line to write to the server's stderr"`
	}
	empty struct{}
)

// tinyPNG is a valid 1x1 red PNG.
var tinyPNG = []byte{
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53,
	0xde, 0x00, 0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, 0x08, 0xd7, 0x63, 0xf8, 0xcf, 0xc0, 0x00,
	0x00, 0x03, 0x01, 0x01, 0x00, 0x18, 0xdd, 0x8d, 0xb0, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e,
	0x44, 0xae, 0x42, 0x60, 0x82,
}

// addBasicTools adds echo and add, the tools every server built on the echo
// server has.
func addBasicTools(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{
		Name:        "echo",
		Description: "Returns its text argument unchanged.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: boolPtr(false)},
	}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return text(in.Text), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "add",
		Description: "Adds two numbers and returns the sum as text.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: boolPtr(false)},
	}, func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, any, error) {
		return text(fmt.Sprint(in.A + in.B)), nil, nil
	})
}

// newEchoServer builds the echo server; the fault servers that serve
// normally reuse it under their own name.
func newEchoServer(name string, cfg *echoConfig, p *proc) *mcp.Server {
	var instructions string
	var protocols []string
	if cfg != nil {
		instructions = *cfg.instructions
		if *cfg.protocol != "" {
			protocols = []string{*cfg.protocol}
		}
	}
	s := mcp.NewServer(implementation(name), &mcp.ServerOptions{
		Instructions:              instructions,
		SupportedProtocolVersions: protocols,
		// Advertise list_changed for every list even before anything changes.
		Capabilities: &mcp.ServerCapabilities{
			Logging:   &mcp.LoggingCapabilities{},
			Tools:     &mcp.ToolCapabilities{ListChanged: true},
			Prompts:   &mcp.PromptCapabilities{ListChanged: true},
			Resources: &mcp.ResourceCapabilities{ListChanged: true},
		},
	})
	addBasicTools(s)
	if cfg != nil && *cfg.extraTool != "" {
		n := *cfg.extraTool
		mcp.AddTool(s, &mcp.Tool{Name: n, Description: "An echo under a name given by -tool; its answer starts with that name."},
			func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
				return text(n + ": " + in.Text), nil, nil
			})
	}

	mcp.AddTool(s, &mcp.Tool{
		Name: "slow",
		Description: "Sleeps for ms milliseconds, then returns. Stops early with an error if the call is cancelled. " +
			"Sends progress notifications when the call carries a progress token.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in slowIn) (*mcp.CallToolResult, any, error) {
		ms, steps := in.Ms, in.Steps
		if ms <= 0 {
			ms = 1000
		}
		if steps <= 0 {
			steps = 5
		}
		token := req.Params.GetProgressToken()
		total := time.Duration(ms) * time.Millisecond
		start := time.Now()
		for i := 1; i <= steps; i++ {
			wait := time.Until(start.Add(total * time.Duration(i) / time.Duration(steps)))
			select {
			case <-ctx.Done():
				return nil, nil, fmt.Errorf("slow: cancelled after %d ms: %w", time.Since(start).Milliseconds(), ctx.Err())
			case <-time.After(wait):
			}
			if token != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: token,
					Progress:      float64(i),
					Total:         float64(steps),
					Message:       fmt.Sprintf("step %d of %d", i, steps),
				})
			}
		}
		return text(fmt.Sprintf("slept %d ms", ms)), nil, nil
	})

	sideEffect := func(_ context.Context, _ *mcp.CallToolRequest, in sideEffectIn) (*mcp.CallToolResult, any, error) {
		n, err := appendSideEffect(cfg.effectFile(), in.Note)
		if err != nil {
			return errorResult(err.Error()), nil, nil
		}
		if cfg != nil && *cfg.effectHold > 0 {
			time.Sleep(*cfg.effectHold)
		}
		return text(fmt.Sprintf("side effect recorded (run %d)", n)), nil, nil
	}
	mcp.AddTool(s, &mcp.Tool{
		Name: "side_effect",
		Description: "Appends a line to the file named by $" + SideEffectEnv + " and returns how many runs the file " +
			"now records. Not idempotent: running it twice records two runs.",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: false, DestructiveHint: boolPtr(false)},
	}, sideEffect)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "idempotent_side_effect",
		Description: "Like side_effect, but annotated idempotentHint: true (a retry is declared safe).",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: boolPtr(false)},
	}, sideEffect)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "destructive",
		Description: "Pretends to delete target. Annotated destructiveHint: true; it changes nothing.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(true)},
	}, func(_ context.Context, _ *mcp.CallToolRequest, in destructiveIn) (*mcp.CallToolResult, any, error) {
		t := in.Target
		if t == "" {
			t = "everything"
		}
		return text("deleted " + t + " (not really)"), nil, nil
	})

	mcp.AddTool(s, &mcp.Tool{
		Name: "log",
		Description: "Sends a notifications/message log notification at level, then returns. As with every go-sdk " +
			"server, the client receives it only once it has asked for logs (logging/setLevel, or the logLevel _meta key).",
	}, func(ctx context.Context, req *mcp.CallToolRequest, in logIn) (*mcp.CallToolResult, any, error) {
		level := mcp.LoggingLevel(in.Level)
		if level == "" {
			level = "info"
		}
		msg := in.Message
		if msg == "" {
			msg = "hello from the log tool"
		}
		if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: level, Logger: name, Data: msg}); err != nil {
			return errorResult("log: " + err.Error()), nil, nil
		}
		return text(fmt.Sprintf("logged %q at %s", msg, level)), nil, nil
	})

	mcp.AddTool(s, &mcp.Tool{
		Name: "ask",
		Description: "Asks the user a question through an elicitation request and returns the answer " +
			"(or says that the user declined or cancelled).",
	}, func(_ context.Context, req *mcp.CallToolRequest, in askIn) (*mcp.CallToolResult, any, error) {
		q := in.Question
		if q == "" {
			q = "What is your favourite colour?"
		}
		resp, ok := req.Params.InputResponses["answer"].(*mcp.ElicitResult)
		if !ok {
			// Returned as input requests, the SDK sends elicitation/create to a
			// legacy client itself, and a 2026-07-28 client retries the call.
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"answer": &mcp.ElicitParams{
				Message: q,
				RequestedSchema: map[string]any{
					"type":       "object",
					"properties": map[string]any{"answer": map[string]any{"type": "string", "description": "your answer"}},
					"required":   []string{"answer"},
				},
			}}}, nil, nil
		}
		switch resp.Action {
		case "accept":
			return text(fmt.Sprintf("answer: %v", resp.Content["answer"])), nil, nil
		default:
			return text("the user chose " + resp.Action), nil, nil
		}
	})

	mcp.AddTool(s, &mcp.Tool{
		Name:        "sample",
		Description: "Asks the client's model for a completion (sampling/createMessage) and returns it. Hosts that refuse sampling make this call fail.",
	}, func(_ context.Context, req *mcp.CallToolRequest, in sampleIn) (*mcp.CallToolResult, any, error) {
		prompt := in.Prompt
		if prompt == "" {
			prompt = "Say hello."
		}
		resp, ok := req.Params.InputResponses["completion"].(*mcp.CreateMessageWithToolsResult)
		if !ok {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"completion": &mcp.CreateMessageParams{
				MaxTokens: 100,
				Messages:  []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: prompt}}},
			}}}, nil, nil
		}
		return &mcp.CallToolResult{Content: resp.Content}, nil, nil
	})

	mcp.AddTool(s, &mcp.Tool{
		Name:        "roots",
		Description: "Lists the client's roots (roots/list) and returns their URIs, one a line.",
	}, func(_ context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
		resp, ok := req.Params.InputResponses["roots"].(*mcp.ListRootsResult)
		if !ok {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"roots": &mcp.ListRootsParams{}}}, nil, nil
		}
		var uris []string
		for _, r := range resp.Roots {
			uris = append(uris, r.URI)
		}
		if len(uris) == 0 {
			return text("no roots"), nil, nil
		}
		return text(strings.Join(uris, "\n")), nil, nil
	})

	var added atomic.Int64
	newName := func(kind, want string) string {
		if want != "" {
			return want
		}
		return fmt.Sprintf("added_%s_%d", kind, added.Add(1))
	}
	mcp.AddTool(s, &mcp.Tool{
		Name:        "add_tool",
		Description: "Adds a new tool (an echo) at runtime; the server then sends notifications/tools/list_changed.",
	}, func(_ context.Context, _ *mcp.CallToolRequest, in nameIn) (*mcp.CallToolResult, any, error) {
		n := newName("tool", in.Name)
		mcp.AddTool(s, &mcp.Tool{Name: n, Description: "A tool added at runtime by add_tool; echoes text."},
			func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
				return text(in.Text), nil, nil
			})
		return text("added tool " + n), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "add_prompt",
		Description: "Adds a new prompt at runtime; the server then sends notifications/prompts/list_changed.",
	}, func(_ context.Context, _ *mcp.CallToolRequest, in nameIn) (*mcp.CallToolResult, any, error) {
		n := newName("prompt", in.Name)
		s.AddPrompt(&mcp.Prompt{Name: n, Description: "A prompt added at runtime by add_prompt."},
			func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "prompt " + n}}}}, nil
			})
		return text("added prompt " + n), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "add_resource",
		Description: "Adds a new resource test://echo/<name> at runtime; the server then sends notifications/resources/list_changed.",
	}, func(_ context.Context, _ *mcp.CallToolRequest, in nameIn) (*mcp.CallToolResult, any, error) {
		n := newName("resource", in.Name)
		uri := "test://echo/" + n
		s.AddResource(&mcp.Resource{URI: uri, Name: n, MIMEType: "text/plain", Description: "A resource added at runtime by add_resource."},
			func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: "resource " + n}}}, nil
			})
		return text("added resource " + uri), nil, nil
	})

	mcp.AddTool(s, &mcp.Tool{
		Name:        "big",
		Description: "Returns bytes bytes of deterministic text (lines of 'line NNNNNN ...'), to test output limits.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
	}, func(_ context.Context, _ *mcp.CallToolRequest, in bigIn) (*mcp.CallToolResult, any, error) {
		n := in.Bytes
		if n <= 0 {
			n = 100000
		}
		return text(bigText(n)), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "image",
		Description: "Returns a 1x1 red PNG image and a line of text describing it.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
	}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.ImageContent{Data: tinyPNG, MIMEType: "image/png"},
			&mcp.TextContent{Text: "a 1x1 red pixel"},
		}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "error_result",
		Description: "Always fails the way a tool should: a result with isError: true and the message as text.",
	}, func(_ context.Context, _ *mcp.CallToolRequest, in errorIn) (*mcp.CallToolResult, any, error) {
		m := in.Message
		if m == "" {
			m = "something went wrong"
		}
		return errorResult(m), nil, nil
	})

	mcp.AddTool(s, &mcp.Tool{
		Name: "env",
		Description: "Returns NAME=value for each named environment variable, or NAME unset; " +
			"with hex, hex-encoded (a test that must see the secret values Switchboard keeps from results).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(_ context.Context, _ *mcp.CallToolRequest, in envIn) (*mcp.CallToolResult, any, error) {
		var lines []string
		for _, k := range in.Names {
			if v, ok := os.LookupEnv(k); ok {
				lines = append(lines, k+"="+v)
			} else {
				lines = append(lines, k+" unset")
			}
		}
		out := strings.Join(lines, "\n")
		if in.Hex {
			out = hex.EncodeToString([]byte(out))
		}
		return text(out), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "cwd",
		Description: "Returns the server's working directory.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
		d, err := os.Getwd()
		if err != nil {
			return errorResult(err.Error()), nil, nil
		}
		return text(d), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "pid",
		Description: "Returns the server's process id (to check that it is reaped).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
		return text(fmt.Sprint(os.Getpid())), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "stderr",
		Description: "Writes text as a line to the server's stderr.",
	}, func(_ context.Context, _ *mcp.CallToolRequest, in stderrIn) (*mcp.CallToolResult, any, error) {
		fmt.Fprintln(p.errw, in.Text)
		return text("wrote to stderr"), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name: "headers",
		Description: "Returns the HTTP request headers this call arrived with, one 'Key: value' a line (none over stdio, nor over the SDK's SSE transport); " +
			"with hex, hex-encoded (a test that must see the secret values Switchboard keeps from results).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(_ context.Context, req *mcp.CallToolRequest, in headersIn) (*mcp.CallToolResult, any, error) {
		if req.Extra == nil || req.Extra.Header == nil {
			return text("no headers"), nil, nil
		}
		var buf bytes.Buffer
		_ = req.Extra.Header.Write(&buf)
		out := strings.TrimSpace(strings.ReplaceAll(buf.String(), "\r\n", "\n"))
		if in.Hex {
			out = hex.EncodeToString([]byte(out))
		}
		return text(out), nil, nil
	})

	s.AddPrompt(&mcp.Prompt{
		Name:        "greet",
		Description: "A greeting for name.",
		Arguments:   []*mcp.PromptArgument{{Name: "name", Description: "who to greet", Required: true}},
	}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{
			Description: "A greeting",
			Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{
				Text: "Say hello to " + req.Params.Arguments["name"] + ".",
			}}},
		}, nil
	})
	s.AddResource(&mcp.Resource{
		URI: "test://echo/readme", Name: "readme", MIMEType: "text/plain",
		Description: "What the echo test server is for.",
	}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
			URI: "test://echo/readme", MIMEType: "text/plain",
			Text: "The echo test server answers Switchboard's runtime tests.",
		}}}, nil
	})
	return s
}

// sideEffectMu serializes appends from concurrent calls in one process;
// O_APPEND keeps lines whole across processes.
var sideEffectMu sync.Mutex

// sideEffectSeen is how far this process has counted the side effect file
// (under sideEffectMu): each append counts only the lines added since, so
// that a soak's thousands of calls do not each read the whole file.
var sideEffectSeen struct {
	fi  os.FileInfo // the file counted: another one at the path starts over
	off int64
	n   int
}

// appendSideEffect appends one line to file and returns how many lines the
// file then holds.
func appendSideEffect(file, note string) (int, error) {
	if file == "" {
		return 0, fmt.Errorf("side_effect: no file: set $%s or -side-effect-file", SideEffectEnv)
	}
	sideEffectMu.Lock()
	defer sideEffectMu.Unlock()
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return 0, fmt.Errorf("side_effect: %w", err)
	}
	n, err := recordRun(f, note)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("side_effect: %w", err)
	}
	return n, nil
}

// recordRun appends a run's line to f and returns how many lines f then
// holds, counting only what was added since this process last counted
// (sideEffectSeen, under sideEffectMu).
func recordRun(f *os.File, note string) (int, error) {
	if _, err := fmt.Fprintf(f, "run pid=%d %s\n", os.Getpid(), note); err != nil {
		return 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	seen := &sideEffectSeen
	if seen.fi == nil || !os.SameFile(fi, seen.fi) || fi.Size() < seen.off {
		seen.fi, seen.off, seen.n = fi, 0, 0
	}
	// Every line is written whole with its newline (O_APPEND), by this
	// process or another: the lines are the newlines.
	buf := make([]byte, 4<<10)
	for {
		k, err := f.ReadAt(buf, seen.off)
		seen.n += bytes.Count(buf[:k], []byte{'\n'})
		seen.off += int64(k)
		if err == io.EOF {
			return seen.n, nil
		}
		if err != nil {
			seen.fi = nil
			return 0, err
		}
	}
}

// CountSideEffects returns how many runs of the side_effect tools file
// records (0 if it does not exist).
func CountSideEffects(file string) (int, error) {
	data, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		n++
	}
	return n, nil
}

// bigText returns n bytes of numbered lines.
func bigText(n int) string {
	var b strings.Builder
	b.Grow(n + 80)
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %06d the quick brown fox jumps over the lazy dog\n", i)
	}
	return b.String()[:n]
}
