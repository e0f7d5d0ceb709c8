package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/lazyre"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
	"github.com/switchboard-mcp/switchboard/toolsurface"
	"github.com/switchboard-mcp/switchboard/trust"
)

func init() {
	registerCommand(func(f *Factory) *cobra.Command { return NewCallCmd(f, nil) })
}

// CallOptions are the inputs of `switchboard call`.
type CallOptions struct {
	runtimeOptions
	// Name is the namespaced tool name, mcp__<server>__<tool>.
	Name string
	// Args is the JSON object of arguments ("{}" when not given).
	Args string
	// ArgPairs are --arg NAME=VALUE values, set over Args. Each VALUE is
	// read as the type the tool's input schema gives NAME (a string when
	// it gives none).
	ArgPairs []string
	JSON     bool
	// Getenv reads MAX_MCP_OUTPUT_TOKENS and
	// SWITCHBOARD_DISABLE_MCP_LARGE_OUTPUT_FILES (Factory.Getenv).
	Getenv func(string) (string, bool)
}

// NewCallCmd returns `switchboard call NAME 'JSON-ARGS'`.
func NewCallCmd(f *Factory, runF func(context.Context, *CallOptions) error) *cobra.Command {
	var pairs []string
	cmd := &cobra.Command{
		Use:               "call NAME ['JSON-ARGS']",
		ValidArgsFunction: completeToolNames(f),
		Short:             "Call one tool and print its result as the model gets it",
		Long: `Call an MCP tool by the name a model sees (mcp__<server>__<tool>; see
'switchboard tools') with a JSON object of arguments (default {}), and print the
result in the envelope a model receives:
  <mcp_response server="…" tool="…" trust="untrusted">…</mcp_response>

--arg NAME=VALUE sets one argument without writing JSON; VALUE is read as the
type the tool's input schema declares (number, integer, boolean, object, array
as JSON; anything else as a string).

A result over MAX_MCP_OUTPUT_TOKENS (default 20000 tokens, about 80 KB) is
saved whole to <switchboard home>/tool-results/<workspace>/<session>/ and a
guide to reading it in pages printed instead, as a model would get it; with
images or audio, or with SWITCHBOARD_DISABLE_MCP_LARGE_OUTPUT_FILES=1, it is
truncated instead. A session's files are removed 7 days after its last one.

With --json, print {isError, content, structuredContent, envelope} instead;
envelope is the text a model gets.
Only the tool's server is started; the call waits for it to connect. Progress
notifications are shown on a terminal.

Exit status: 0 on success, 1 when the call failed or the tool reported an error
(isError) or no server has a tool of that name, 2 for a name not shaped
mcp__<server>__<tool> or arguments that are not a JSON object, 3
when a permission rule refuses the call, or it needs permission and nobody is
at a terminal to answer (the message names the rule that would allow it).`,
		Example: `  switchboard call mcp__demo__echo '{"text":"hello"}'
  switchboard call mcp__demo__add --arg a=2 --arg b=3
  switchboard call mcp__demo__roll_dice --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 && argWords(args[1:]) {
				// `call TOOL text=hi`: arguments as NAME=VALUE words,
				// which go with --arg.
				return Usagef("switchboard call "+shellQuote(args[0])+" "+argFlags(args[1:]),
					"call takes a tool name and one JSON object of arguments; NAME=VALUE arguments go with --arg")
			}
			if len(args) < 1 || len(args) > 2 {
				return Usagef("run 'switchboard call --help' for usage",
					"call takes a tool name and optionally a JSON object of arguments, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := &CallOptions{runtimeOptions: newRuntimeOptions(f), Name: args[0], Args: "{}", ArgPairs: pairs, JSON: f.global().JSON, Getenv: f.Getenv}
			if len(args) == 2 {
				opts.Args = args[1]
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return callRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringArrayVar(&pairs, "arg", nil, "set argument `NAME=VALUE` (repeatable; typed by the tool's schema)")
	return cmd
}

// callJSON is `call --json`, a contract scripts rely on: isError, content,
// envelope.
type callJSON struct {
	IsError           bool          `json:"isError"`
	Content           []mcp.Content `json:"content"`
	StructuredContent any           `json:"structuredContent,omitempty"`
	Envelope          string        `json:"envelope"`
}

// argWords reports whether words are NAME=VALUE arguments, not JSON: each
// has an = after a name, and none starts as JSON text would.
func argWords(words []string) bool {
	for _, w := range words {
		name, _, ok := strings.Cut(w, "=")
		if !ok || name == "" || strings.ContainsAny(name[:1], "{[\"' ") || strings.HasPrefix(w, "-") {
			return false
		}
	}
	return true
}

// argFlags is words as --arg flags, quoted for the shell.
func argFlags(words []string) string {
	flags := make([]string, len(words))
	for i, w := range words {
		flags[i] = "--arg " + shellQuote(w)
	}
	return strings.Join(flags, " ")
}

// servedToolName reports whether name looks like a gateway client's name
// for a tool (<server>__<tool>) rather than the host's (mcp__…).
func servedToolName(name string) bool {
	return !strings.HasPrefix(name, "mcp__") && strings.Contains(strings.Trim(name, "_"), "__")
}

// parseArgs checks that s is one JSON object; a syntax error names its
// line and column.
func parseArgs(s string) (json.RawMessage, error) {
	data := []byte(strings.TrimSpace(s))
	if len(data) == 0 {
		data = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var v any
	err := dec.Decode(&v)
	if err == nil && dec.More() {
		off := dec.InputOffset()
		line, col := config.LineCol(data, int(off))
		return nil, Usagef(`pass one JSON object, e.g. '{"text":"hello"}'`,
			"invalid JSON arguments at line %d, column %d: unexpected data after the object", line, col)
	}
	if err != nil {
		var se *json.SyntaxError
		off := int64(len(data))
		msg := err.Error()
		if errors.As(err, &se) {
			off = se.Offset - 1
			msg = se.Error()
		} else if errors.Is(err, io.ErrUnexpectedEOF) {
			msg = "unexpected end of input"
		}
		line, col := config.LineCol(data, int(max(off, 0)))
		return nil, Usagef(`pass one JSON object, quoted for the shell, e.g. '{"text":"hello"}'`,
			"invalid JSON arguments at line %d, column %d: %s", line, col, msg)
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, Usagef(`wrap the arguments in an object, e.g. '{"text":"hello"}'`,
			"tool arguments must be a JSON object, not %s", jsonKind(v))
	}
	return json.RawMessage(data), nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "that"
}

// cutName matches a name toolsurface cut to fit: it ends in '_' and eight
// hex digits of a hash.
var cutName = lazyre.New(`_[0-9a-f]{8}$`)

// toolCandidate reports whether a server can own the namespaced name
// (its sanitized name is the name's server part), so that call starts only
// the servers that matter.
func toolCandidate(name string) func(config.ResolvedServer) bool {
	if name == host.ToolSearchName {
		return nil // the built-in searches the deferred tools of every server
	}
	return func(rs config.ResolvedServer) bool {
		return strings.HasPrefix(name, toolsurface.Prefix+toolsurface.SanitizePart(rs.Name)+toolsurface.Separator)
	}
}

func callRun(ctx context.Context, opts *CallOptions) (err error) {
	args, err := parseArgs(opts.Args)
	if err != nil {
		return err
	}
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	keep := toolCandidate(opts.Name)
	if keep != nil && cutName().MatchString(opts.Name) && !slices.ContainsFunc(cfg.Servers, keep) {
		// A long name cut to 64 may have lost part of its server's name
		// (toolsurface.ToolName): every server is a candidate.
		keep = nil
	}
	s, err := startSessionWith(ctx, &opts.runtimeOptions, cfg, keep)
	if err != nil {
		return err
	}
	defer func() { err = s.close(err) }()

	// A call waits for its server however long it takes to connect (the
	// startup timeout bounds that), not just --wait.
	s.wait(ctx, -1)
	if len(opts.ArgPairs) > 0 {
		if args, err = setArgs(args, opts.ArgPairs, s.toolDef(ctx, opts.Name)); err != nil {
			return err
		}
	}

	// A tool held by tool pinning was put to the terminal by CallWith
	// (the session's Prompter asks); still held, it is exit 3.
	out, cerr := s.callWithProgress(ctx, opts.Name, args, outputOptions(opts, s.cfg.Workspace))
	if errors.Is(cerr, host.ErrToolHeld) {
		return heldErr(cerr) // exit 3 (toolpins.go)
	}
	if cerr != nil {
		var held *switchboard.NotApprovedError
		if errors.As(cerr, &held) {
			// Held by launch trust: exit 3 (trust.go).
			return RefusedErr(held, fmt.Sprintf("run `%s` to review and approve it", approveCommand(held.Server)))
		}
		if errors.Is(cerr, host.ErrUnknownTool) {
			if err := notInProfile(s, opts.Name); err != nil {
				return err
			}
			if near := suggestTool(ctx, s, opts); near != "" {
				return unknownToolErr(opts.Name, cerr, fmt.Sprintf("did you mean %s? (`switchboard tools` lists the names)", near))
			}
		}
		return callErr(cerr)
	}
	if out.Output.Fallback == toolsurface.FallbackWriteError {
		fmt.Fprintf(opts.IO.ErrOut, "warning: could not save the large result, so it was truncated: %s\n", termsafe.Line(fmt.Sprint(out.Output.WriteErr)))
	}
	res, env := out.Raw, out.Text
	if opts.JSON {
		content := res.Content
		if content == nil {
			content = []mcp.Content{}
		}
		if err := printJSON(opts.IO.Out, callJSON{IsError: res.IsError, Content: content, StructuredContent: res.StructuredContent, Envelope: env}); err != nil {
			return err
		}
	} else {
		// What a person reads is the model's envelope with anything the
		// terminal would act on escaped; the model gets it unchanged.
		fmt.Fprintln(opts.IO.Out, termsafe.Text(env))
	}
	if res.IsError {
		return FailureErr(fmt.Errorf("%s returned an error result", opts.Name), "")
	}
	return nil
}

// notInProfile is the refusal (exit 3) of a call of the tool name when
// its server is configured but --profile leaves it out, nil when that is
// not why no server has the tool.
func notInProfile(s *session, name string) error {
	profile, keep := s.sb.Profile(), toolCandidate(name)
	if profile == "" || keep == nil {
		return nil
	}
	server := ""
	for _, rs := range s.cfg.Servers {
		if !keep(rs) {
			continue
		}
		if s.h.Includes(rs.Name) {
			return nil // the profile's server lacks the tool
		}
		server = rs.Name
	}
	if server == "" {
		return nil
	}
	where := ""
	if p, ok := s.profiles()[profile]; ok {
		where = " (" + s.opts.tilde(p.Position.String()) + ")"
	}
	return RefusedErr(fmt.Errorf("tool %q: server %q is configured but not in profile %q", name, server, profile),
		fmt.Sprintf("run it without --profile, or add %q to the \"servers\" of profile %q%s", server, profile, where))
}

// unknownToolErr is the error for a tool name that names no tool: a
// name shaped mcp__<server>__<tool> that names nothing is a failure
// (exit 1), as every name that names nothing is (README, The CLI); any
// other shape is a usage mistake (exit 2).
func unknownToolErr(name string, err error, hint string) error {
	if _, _, ok := toolsurface.ParseToolName(name); ok {
		return FailureErr(err, hint)
	}
	return UsageErr(err, hint)
}

// suggestTool is the tool name nearest a mistyped one (by edit distance,
// at most a third of the name's length), or "". The tools of the servers
// the call started come first; when the name matched no server, the
// configured server nearest its server part is started to look (bounded
// by --wait): the mistake is most often in the server's part then.
func suggestTool(ctx context.Context, s *session, opts *CallOptions) string {
	names := func(s *session) []string {
		var out []string
		if list, _ := s.h.Tools(ctx); list != nil {
			for _, t := range append(append([]host.Tool(nil), list.Tools...), list.Deferred...) {
				if t.Server != "" {
					out = append(out, t.Name)
				}
			}
		}
		return out
	}
	if near := nearestTool(opts.Name, names(s)); near != "" {
		return near
	}
	rest, ok := strings.CutPrefix(opts.Name, toolsurface.Prefix)
	if !ok {
		return ""
	}
	part, _, _ := strings.Cut(rest, toolsurface.Separator)
	cfg, err := opts.Config() // the session's holds only the servers it started
	if err != nil {
		return ""
	}
	best, bestD := "", 3 // a server name within 2 edits
	for _, rs := range cfg.Servers {
		if d := levenshtein(strings.ToLower(part), strings.ToLower(toolsurface.SanitizePart(rs.Name))); d < bestD && rs.Availability == config.Available {
			best, bestD = rs.Name, d
		}
	}
	if best == "" || bestD == 0 {
		return ""
	}
	o := opts.runtimeOptions
	quiet := *o.IO
	quiet.ErrOut, quiet.CanPrompt = io.Discard, false
	o.IO, o.ErrTTY = &quiet, false
	o2, err := startSession(ctx, &o, serverOnly(best))
	if err != nil {
		return ""
	}
	defer o2.close(nil)
	o2.wait(ctx, o.Wait)
	return nearestTool(opts.Name, names(o2))
}

// nearestTool is the name of names nearest name: within a third of the
// typed tool part's length in edits (at least one; a swap of two letters
// is one), so that "ecoh" finds "echo" but "nope" does not find "add".
// "" when none is that close.
func nearestTool(name string, names []string) string {
	part := name[strings.LastIndex(name, toolsurface.Separator)+1:]
	best, bestD := "", max(1, len([]rune(part))/3)+1
	for _, n := range names {
		if d := swapDistance(strings.ToLower(name), strings.ToLower(n)); d < bestD && n != name {
			best, bestD = n, d
		}
	}
	return best
}

// swapDistance is the edit distance of a and b counting a swap of two
// adjacent characters as one edit (optimal string alignment).
func swapDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}

// outputOptions bound what a call gives the model
// (toolsurface.Present): the limit and switch of the environment, spill
// files in workspace's folder. A bad setting is a warning on stderr.
func outputOptions(opts *CallOptions, workspace string) *toolsurface.OutputOptions {
	getenv := func(k string) string {
		if opts.Getenv == nil {
			return ""
		}
		v, _ := opts.Getenv(k)
		return v
	}
	oo, err := toolsurface.OutputOptionsFromEnv(getenv, opts.Home)
	if err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintln(opts.IO.ErrOut, "warning: "+termsafe.Line(line))
		}
	}
	oo.Workspace = workspace
	return &oo
}

// toolDef is the definition of the tool called name, for --arg's types;
// nil when it is not listed (the call will say why).
func (s *session) toolDef(ctx context.Context, name string) *mcp.Tool {
	if list, _ := s.h.Tools(ctx); list != nil {
		for _, t := range list.Tools {
			if t.Name == name {
				return t.Tool
			}
		}
	}
	return nil
}

// setArgs sets --arg NAME=VALUE pairs in the JSON object args, each value
// typed by the tool's input schema (def may be nil: then all are strings).
func setArgs(args json.RawMessage, pairs []string, def *mcp.Tool) (json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil {
		return nil, err // parseArgs checked it is an object
	}
	if obj == nil {
		obj = map[string]json.RawMessage{}
	}
	var props map[string]any
	if def != nil {
		props, _ = toolsurface.NormalizeSchema(def.InputSchema)["properties"].(map[string]any)
	}
	for _, kv := range pairs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, Usagef("write each argument as --arg NAME=VALUE", "invalid --arg %q", kv)
		}
		typ := ""
		if p, ok := props[k].(map[string]any); ok {
			typ, _ = p["type"].(string)
		}
		raw, err := typedValue(typ, v)
		if err != nil {
			return nil, Usagef(fmt.Sprintf("the tool's schema declares %s as %s", k, typ), "invalid --arg %s: %v", k, err)
		}
		obj[k] = raw
	}
	return json.Marshal(obj)
}

// typedValue encodes one --arg value as the JSON type the schema names.
func typedValue(typ, v string) (json.RawMessage, error) {
	switch typ {
	case "number", "integer", "boolean", "object", "array", "null":
		var x any
		if err := json.Unmarshal([]byte(v), &x); err != nil {
			return nil, fmt.Errorf("%q is not a JSON %s", v, typ)
		}
		if got := jsonType(x); got != typ && !(typ == "number" && got == "integer") {
			return nil, fmt.Errorf("%q is not %s", v, withArticle(typ))
		}
		return json.RawMessage(v), nil
	}
	return json.Marshal(v)
}

// jsonType names a decoded JSON value's schema type.
func jsonType(x any) string {
	switch x := x.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if x == float64(int64(x)) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	}
	return "object"
}

func withArticle(typ string) string {
	switch typ {
	case "integer", "object", "array":
		return "an " + typ
	}
	return "a " + typ
}

// callWithProgress runs the call through the front door's one path
// (switchboard.Switchboard.CallWith), showing "calling NAME (1.2s)…" and
// the server's progress notifications on a terminal. out bounds the
// result (nil: the front door's own bounds).
func (s *session) callWithProgress(ctx context.Context, name string, args json.RawMessage, out *toolsurface.OutputOptions) (*switchboard.Result, error) {
	start := s.opts.now()
	var (
		mu   sync.Mutex
		last *mcp.ProgressNotificationParams
	)
	progress := func(p *mcp.ProgressNotificationParams) {
		mu.Lock()
		last = p
		mu.Unlock()
	}
	s.line.Start(func() string {
		elapsed := s.opts.now().Sub(start)
		mu.Lock()
		p := last
		mu.Unlock()
		if p == nil && elapsed < 300*time.Millisecond {
			return ""
		}
		return fmt.Sprintf("calling %s (%s)…%s", name, formatElapsed(elapsed), progressText(p))
	})
	defer s.line.Stop()
	return s.sb.CallWith(ctx, name, args, &switchboard.CallOptions{Progress: progress, Output: out})
}

// progressText renders a progress notification: " 3/5 copying files".
func progressText(p *mcp.ProgressNotificationParams) string {
	if p == nil {
		return ""
	}
	s := " "
	switch {
	case p.Total > 0:
		s += fmt.Sprintf("%g/%g", p.Progress, p.Total)
	default:
		s += fmt.Sprintf("%g", p.Progress)
	}
	if p.Message != "" {
		s += " " + oneLineText(p.Message)
	}
	return s
}

// filteredHint is the way out of a server's tool filter: the
// `mcp tools enable` that shows the tool again when the filter is one it
// edits (a layer of the user's own file, hiding the tool by a
// disabledTools glob, which it names), else the file the reason names.
func filteredHint(fe *host.FilteredError) string {
	if fe.Pattern == "" || fe.Scope != "local" && fe.Scope != "user" {
		return "to use it, take it out of that filter, in the file named above (switchboard mcp tools enable changes only the disabledTools of your own settings)"
	}
	cmd := "switchboard mcp tools enable "
	if fe.Scope == "user" {
		cmd += "--scope user "
	}
	word := trust.Quote(fe.Pattern)
	if strings.HasPrefix(fe.Pattern, "-") {
		word = "-- " + word
	}
	return "to use it, take it out of that filter (" + cmd + fe.Server + " " + word + ")"
}

// callErr maps a failed call to its exit status and hint.
func callErr(err error) error {
	switch {
	case errors.Is(err, host.ErrDenied):
		return deniedErr(err)
	case errors.Is(err, host.ErrFiltered):
		var fe *host.FilteredError
		errors.As(err, &fe)
		if fe.View {
			// A profile's filter: `mcp tools enable` edits the server's
			// own, which would not show it.
			return RefusedErr(err, "to use it, take it out of that profile's filter in the file named, or run without --profile")
		}
		return RefusedErr(err, filteredHint(fe))
	case errors.Is(err, host.ErrUnknownTool):
		var ue *host.UnknownToolError
		if errors.As(err, &ue) && servedToolName(ue.Name) {
			// The gateway's name for it (<server>__<tool>), as a client of
			// the gateway shows it.
			return UsageErr(err, fmt.Sprintf("a gateway's clients see <server>__<tool>; here tools are mcp__<server>__<tool>: try mcp__%s (`switchboard tools` lists them)", ue.Name))
		}
		name := ""
		if ue != nil {
			name = ue.Name
		}
		return unknownToolErr(name, err, "run `switchboard tools` for the tool names")
	case errors.Is(err, host.ErrNotConnected):
		return FailureErr(err, "run `switchboard status` to see why")
	case errors.Is(err, host.ErrCircuitOpen):
		return FailureErr(err, "the server failed repeatedly; run `switchboard status`, and retry later")
	case errors.Is(err, host.ErrTimeout):
		return FailureErr(err, "raise the server's \"timeout\" (ms) or MCP_TOOL_TIMEOUT")
	case errors.Is(err, host.ErrMayHaveRun):
		return FailureErr(err, "check whether it took effect before calling it again")
	case errors.Is(err, context.Canceled):
		return FailureErr(errors.New("interrupted"), "")
	}
	return FailureErr(err, "")
}
