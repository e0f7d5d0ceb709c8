package testserver

import (
	"context"
	"flag"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HostileText is what the hostile-output server puts in everything it says:
// a terminal would act on it or hide it instead of showing it. It clears
// the screen and homes the cursor (CSI), sets the window title (OSC 0),
// wraps "ok" in a hyperlink to somewhere else (OSC 8), writes the clipboard
// (OSC 52), uses the one-byte C1 CSI, reverses what follows (U+202E) and
// opens an isolate (U+2066), hides a zero-width space, returns the cursor
// to the start of the line (CR), backspaces, and ends in DEL.
const HostileText = "\x1b[2J\x1b[H" + "\x1b]0;pwned\x07" + "\x1b]8;;https://evil.example/\x1b\\ok\x1b]8;;\x1b\\" +
	"\x1b]52;c;cm0gLXJmIH4=\x07" + "\u009b31m" + "\u202egpj.exe" + "\u2066" + "zero\u200bwidth" + "\rover" + "\b" + "\x7f"

// HostileToolName is the name of the hostile-output server's tool whose
// name itself holds an escape sequence and a bidi override (the SDK only
// logs that such a name is invalid).
const HostileToolName = "name\x1b[31m\u202eevil"

// HostileResourceURI is the hostile-output server's resource. Its name,
// title, description and contents are hostile; the URI is plain, since
// Switchboard refuses references holding control characters.
const HostileResourceURI = "hostile://readme"

// The hostile-output server puts HostileText into every string a client
// may show a person: its name, title and instructions, its stderr, its tool
// names, titles and descriptions, a tool result, an error message, a log
// notification and a progress message, a prompt and its argument, and a
// resource and its contents. It checks that Switchboard's human output
// never hands any of it raw to a terminal.
func init() {
	register("hostile-output", serverDef{
		doc: "puts escape sequences, C1 controls and bidi overrides (HostileText) in everything it says: " +
			"stderr, serverInfo, instructions, tools echo_hostile (result, log, progress; with -hostile-arg, an argument's description) and fail_hostile (error), " +
			"prompt hostile_prompt, resource " + fmt.Sprintf("%q", HostileResourceURI),
		inProcess: true,
		setup: func(fs *flag.FlagSet, p *proc) func(context.Context) error {
			exit := fs.Bool("exit", false, "write HostileText to stderr and exit with status 1 before the handshake")
			arg := fs.Bool("hostile-arg", false, "give echo_hostile an argument, text, whose description is hostile (a form made from its schema shows it)")
			p.build = func() *mcp.Server { return newHostileOutputServer(*arg) }
			return func(ctx context.Context) error {
				fmt.Fprintf(p.errw, "hostile-output starting %s\n", HostileText)
				if *exit {
					fmt.Fprintf(p.errw, "fatal: %s\n", HostileText)
					return exitError{code: 1}
				}
				return p.buildAndServe(ctx)
			}
		},
	})
}

func newHostileOutputServer(arg bool) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "hostile" + HostileText, Title: HostileText, Version: "v1" + HostileText},
		&mcp.ServerOptions{
			Instructions: "instructions " + HostileText,
			Capabilities: &mcp.ServerCapabilities{
				Tools:     &mcp.ToolCapabilities{},
				Prompts:   &mcp.PromptCapabilities{},
				Resources: &mcp.ResourceCapabilities{},
				Logging:   &mcp.LoggingCapabilities{},
			},
		})
	obj := map[string]any{"type": "object"}
	echoIn := any(obj)
	if arg {
		echoIn = map[string]any{"type": "object", "properties": map[string]any{
			"text": map[string]any{"type": "string", "description": "argument " + HostileText}}}
	}
	s.AddTool(&mcp.Tool{Name: "echo_hostile", Title: "title " + HostileText,
		Description: "description " + HostileText + "\nsecond line " + HostileText, InputSchema: echoIn},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "logger " + HostileText, Data: "log " + HostileText})
			if token := req.Params.GetProgressToken(); token != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: 1, Total: 2, Message: "progress " + HostileText})
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "result " + HostileText + "\nsecond line\tend"}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "fail_hostile", Description: "fails with a protocol error whose message is hostile", InputSchema: obj},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "failure " + HostileText + "\nhint: a line of its own"}
		})
	s.AddTool(&mcp.Tool{Name: HostileToolName, Description: "a tool whose name is hostile", InputSchema: obj},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "named " + HostileText}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "hostile_prompt", Title: "title " + HostileText, Description: "prompt description " + HostileText,
		Arguments: []*mcp.PromptArgument{{Name: "topic", Description: "argument " + HostileText, Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: HostileText, Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "prompt " + HostileText + "\nabout " + req.Params.Arguments["topic"]}},
			}}, nil
		})
	s.AddResource(&mcp.Resource{URI: HostileResourceURI, Name: "readme" + HostileText, Title: "title " + HostileText,
		Description: "resource description " + HostileText, MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
				{URI: req.Params.URI, MIMEType: "text/plain", Text: "resource " + HostileText + "\nline two\n"},
			}}, nil
		})
	return s
}
