package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/demoserver"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
	"github.com/switchboard-mcp/switchboard/policy"
	"github.com/switchboard-mcp/switchboard/toolsurface"
)

func init() {
	registerCommand(func(f *Factory) *cobra.Command { return NewDemoCmd(f, nil) })
}

// demoServer is the name of the bundled example server in the demo.
const demoServer = "demo"

// demoTool and demoArgs are the call the demo makes.
const (
	demoTool = "word_count"
	demoArgs = `{"text":"Switchboard turns MCP servers\ninto a safe, live tool surface."}`
)

// DemoOptions are the inputs of `switchboard demo`.
type DemoOptions struct {
	runtimeOptions
	// LoadOptions are the configuration options of this run; the demo
	// replaces its servers with the bundled one.
	LoadOptions *config.LoadOptions
	// ServerCommand returns the argv of the bundled server
	// (demoserver.Command: this binary, re-executed).
	ServerCommand func() (string, []string, error)
	JSON          bool
}

// NewDemoCmd returns `switchboard demo`.
func NewDemoCmd(f *Factory, runF func(context.Context, *DemoOptions) error) *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: "Run the whole chain end to end on a bundled example server",
		Long: `Run the whole chain on the example MCP server bundled in this binary, started
as a real child process: resolve a configuration holding it (in memory; no file
is read or written), start it, show its status, list its tools as a model sees
them, call one, and print the result in the envelope the model gets.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := &DemoOptions{
				runtimeOptions: newRuntimeOptions(f),
				LoadOptions:    f.LoadOptions(),
				ServerCommand:  demoserver.Command,
				JSON:           f.global().JSON,
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return demoRun(cmd.Context(), opts)
		},
	}
}

// demoConfig resolves a configuration holding only the bundled server, as
// a session server (it skips the files and is user-trusted). Managed
// policy still applies.
func demoConfig(opts *DemoOptions) (*config.Resolved, error) {
	lo := config.LoadOptions{}
	if opts.LoadOptions != nil {
		lo = *opts.LoadOptions
	}
	command, args, err := opts.ServerCommand()
	if err != nil {
		return nil, FailureErr(err, "")
	}
	lo.MCPConfigs = nil
	lo.StrictMCPConfig = true
	lo.Session = map[string]config.Server{demoServer: {
		Type:        config.TypeStdio,
		Command:     command,
		Args:        args,
		Description: "the example server bundled with switchboard",
	}}
	cfg, err := config.Load(&lo)
	if err != nil {
		return nil, ConfigErr(err, "")
	}
	return cfg, nil
}

type demoJSON struct {
	Servers []statusServerJSON `json:"servers"`
	Tools   []toolJSON         `json:"tools"`
	Call    demoCallJSON       `json:"call"`
}

type demoCallJSON struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	callJSON
}

func demoRun(ctx context.Context, opts *DemoOptions) (err error) {
	cfg, err := demoConfig(opts)
	if err != nil {
		return err
	}
	out := opts.IO.Out
	// The bundled server is ours and read-only: the demo allows its calls
	// for this run (deny rules still apply).
	opts.SessionRules = append(opts.SessionRules, policy.NewRule(policy.Allow, toolsurface.Prefix+demoServer, policy.Source{Scope: policy.ScopeSession}))
	// The demo writes nothing: the bundled server's tools are not pinned.
	hostOpts := opts.HostOptions
	opts.HostOptions = func(h *host.Options) {
		if hostOpts != nil {
			hostOpts(h)
		}
		h.Pins = nil
	}
	s, err := startSessionWith(ctx, &opts.runtimeOptions, cfg, serverOnly(demoServer))
	if err != nil {
		return err
	}
	defer func() { err = s.close(err) }()

	if !opts.JSON {
		fmt.Fprintf(out, "Switchboard demo: the whole chain on the example server bundled in this binary.\n")
		fmt.Fprintf(out, "Nothing is read from or written to your configuration; the server %q exists for this run only.\n", demoServer)
	}

	// 1–2. Start it and show the status, as `switchboard status` would.
	report := s.snapshot(ctx)
	var st host.ServerStatus
	for _, x := range report.Servers {
		if x.Name == demoServer {
			st = x
		}
	}
	if !opts.JSON {
		fmt.Fprintf(out, "\n1. Status (switchboard status)\n")
		tio := *opts.IO
		tio.IsTTY = true // the demo is read by a person even when piped
		var b bytes.Buffer
		tio.Out = &b
		t := newTablePrinter(&tio, "name", "type", "scope", "state", "tools", "tokens", "reason")
		t.AddRow(st.Name, dashEmpty(string(st.Type)), dashEmpty(string(st.Scope)), string(st.State),
			countCell(st, st.Tools), countCell(st, st.Tokens), reasonText(st, opts.now()))
		_ = t.Render()
		writeIndented(out, b.String(), "   ")
		fmt.Fprintf(out, "   command: %s\n", termsafe.Line(st.Command))
	}
	if st.State != host.StateConnected {
		if !opts.JSON {
			for _, l := range lastNonEmptyLines(st.StderrTail, statusStderrLines) {
				fmt.Fprintf(out, "   stderr: %s\n", termsafe.Line(l))
			}
		}
		return Failuref("the demo server runs from this binary; `switchboard status --log-level debug` may say more",
			"the demo server did not connect: %s %s: %s", demoServer, st.State.Phrase(), dashEmpty(st.Reason))
	}

	// 3. Its tools, as a model sees them.
	list, lerr := s.h.Tools(ctx)
	if lerr != nil {
		return FailureErr(fmt.Errorf("listing the demo tools: %w", lerr), "")
	}
	if !opts.JSON {
		fmt.Fprintf(out, "\n2. Tools as the model sees them (switchboard tools)\n")
		tio := *opts.IO
		tio.IsTTY = true
		var b bytes.Buffer
		tio.Out = &b
		t := newTablePrinter(&tio, "name", "description")
		for _, tool := range list.Tools {
			t.AddRow(tool.Name, truncRunes(descFirstLine(tool.Tool.Description), 72))
		}
		_ = t.Render()
		writeIndented(out, b.String(), "   ")
	}

	// 4. One call, and its result in the envelope the model gets.
	name := toolsurface.ToolName(demoServer, demoTool)
	if !opts.JSON {
		fmt.Fprintf(out, "\n3. A call, and the result as the model gets it\n")
		fmt.Fprintf(out, "   switchboard call %s '%s'\n\n", name, demoArgs)
	}
	called, cerr := s.callWithProgress(ctx, name, json.RawMessage(demoArgs), nil)
	if cerr != nil {
		return callErr(cerr)
	}
	res, env := called.Raw, called.Text

	if opts.JSON {
		j := demoJSON{Servers: report.json(s.cfg, opts.now()).Servers, Tools: []toolJSON{}}
		for _, t := range list.Tools {
			j.Tools = append(j.Tools, toolJSON{Name: t.Name, Server: t.Server, Tool: t.Tool.Name, Title: t.Tool.Title,
				Description: toolsurface.CapDescription(t.Tool.Description, 0), InputSchema: toolsurface.NormalizeSchema(t.Tool.InputSchema)})
		}
		j.Call = demoCallJSON{Name: name, Arguments: json.RawMessage(demoArgs),
			callJSON: callJSON{IsError: res.IsError, Content: res.Content, StructuredContent: res.StructuredContent, Envelope: env}}
		return printJSON(out, j)
	}
	writeIndented(out, termsafe.Text(env)+"\n", "   ")
	fmt.Fprintf(out, "   The model gets the server's text inside these tags, marked as untrusted input.\n")

	fmt.Fprint(out, `
What next:
   switchboard mcp add NAME -- COMMAND [ARGS…]   add a server of your own, e.g. (with Node installed)
       switchboard mcp add everything -- npx -y @modelcontextprotocol/server-everything
   switchboard status                            see every configured server and why it is (not) running
   switchboard tools                             list their tools as a model sees them
   switchboard permissions allow mcp__everything__echo
                                                 let that tool run without asking
   switchboard call mcp__everything__echo '{"message":"hello"}'
   switchboard prompts | resources               the servers' prompts and resources
`)
	return nil
}

// writeIndented writes text with every non-empty line prefixed.
func writeIndented(w io.Writer, text, prefix string) {
	for _, l := range strings.SplitAfter(text, "\n") {
		if strings.TrimSpace(l) == "" {
			if l != "" {
				io.WriteString(w, "\n")
			}
			continue
		}
		io.WriteString(w, prefix+l)
	}
}
