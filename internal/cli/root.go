// Package cli is the switchboard command line: the root command, global
// flags, the Factory every command is built from, exit codes and
// the server-management commands (mcp add/list/get/remove/enable/disable/
// import).
//
// Each command follows one shape: a cobra command whose flags fill an
// Options struct, and a run function xxxRun(ctx, opts) that does the work.
// New*Cmd constructors take a runF seam: tests pass a function that
// captures the Options, to check flag parsing alone.
//
// Commands in their own files (the runtime commands status, tools, call,
// demo…) register themselves from init with registerCommand or
// registerMCPCommand, so that adding one never means editing this file.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/internal/termsafe"
)

var (
	extraCommands    []func(*Factory) *cobra.Command
	extraMCPCommands []func(*Factory) *cobra.Command
)

// registerCommand adds a top-level command; call it from init.
func registerCommand(newCmd func(*Factory) *cobra.Command) {
	extraCommands = append(extraCommands, newCmd)
}

// registerMCPCommand adds a subcommand of "mcp"; call it from init.
func registerMCPCommand(newCmd func(*Factory) *cobra.Command) {
	extraMCPCommands = append(extraMCPCommands, newCmd)
}

// Main runs switchboard with the process's arguments and streams and
// returns the exit code. It is the only place errors become exit codes.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer startCPUProfile()()
	tuneOneShotRuntime(os.LookupEnv)
	return Run(ctx, NewFactory(), os.Args[1:])
}

// CPUProfileEnv names a file for a CPU profile of the whole command, for
// whoever measures Switchboard (docs/benchmarks.md): e.g. the relay of
// `serve --stdio` under a benchmark client.
const CPUProfileEnv = "SWITCHBOARD_CPUPROFILE"

func startCPUProfile() (stop func()) {
	path := os.Getenv(CPUProfileEnv)
	if path == "" {
		return func() {}
	}
	os.Unsetenv(CPUProfileEnv) // not for the servers it starts
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "warning: %s: %v\n", CPUProfileEnv, err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		fmt.Fprintf(os.Stderr, "warning: %s: %v\n", CPUProfileEnv, err)
		return func() {}
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}

// Run executes the command line args with f and returns the exit code,
// having printed any error to f.IO.ErrOut.
func Run(ctx context.Context, f *Factory, args []string) int {
	cmd := NewRootCmd(f)
	cmd.SetArgs(args)
	cmd.SetIn(f.IO.In)
	cmd.SetOut(f.IO.Out)
	cmd.SetErr(f.IO.ErrOut)
	err := cmd.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	err = classify(cmd, err)
	printError(f.IO.ErrOut, err)
	return exitCode(err)
}

// classify turns the untyped errors cobra makes into usage errors.
func classify(root *cobra.Command, err error) error {
	var ee *ExitError
	if errors.As(err, &ee) {
		return err
	}
	if hint := authHint(err); hint != "" {
		return FailureErr(err, hint)
	}
	msg := err.Error()
	if strings.HasPrefix(msg, "unknown command ") {
		// Cobra appends "Did you mean this?" suggestions on more lines.
		first, rest, _ := strings.Cut(msg, "\n")
		hint := "run 'switchboard --help' for the list of commands"
		if s := strings.Fields(rest); len(s) > 0 && strings.HasPrefix(rest, "\nDid you mean this?") {
			hint = "did you mean: " + strings.Join(s[4:], ", ") + "?"
		}
		if w := strings.Fields(strings.TrimPrefix(first, "unknown command ")); len(w) > 0 {
			if name, err := strconv.Unquote(w[0]); err == nil {
				if near := nestedCommands(root, name); len(near) > 0 {
					hint = "did you mean: " + strings.Join(near, ", ") + "?"
				}
			}
		}
		return UsageErr(errors.New(first), hint)
	}
	return err
}

// nestedCommands are the subcommands one level down that a word typed at
// the top names (switchboard add → switchboard mcp add; pin → tools
// accept, which pins a changed tool), as their command paths.
func nestedCommands(root *cobra.Command, name string) []string {
	var out []string
	for _, c := range root.Commands() {
		for _, sub := range c.Commands() {
			if !sub.Hidden && (sub.Name() == name || slices.Contains(sub.Aliases, name) || slices.Contains(sub.SuggestFor, name)) {
				out = append(out, sub.CommandPath())
			}
		}
	}
	return out
}

// printError prints err as one line and its hint, if any, as a second.
func printError(w io.Writer, err error) {
	var ee *ExitError
	if errors.As(err, &ee) && ee.Err == nil {
		return // already reported
	}
	msg := strings.TrimSpace(err.Error())
	// Errors quote servers and repositories: escaped (termsafe), and one
	// line, so that a server's message cannot add a "hint:" of its own.
	fmt.Fprintf(w, "error: %s\n", termsafe.Line(msg))
	if errors.As(err, &ee) && ee.Hint != "" {
		fmt.Fprintf(w, "hint: %s\n", termsafe.Line(ee.Hint))
	}
}

// NewRootCmd returns the switchboard command with its global flags bound
// to f.Global and every subcommand added.
func NewRootCmd(f *Factory) *cobra.Command {
	if f.Global == nil {
		f.Global = &GlobalOptions{}
	}
	g := f.Global
	cmd := &cobra.Command{
		Use:   "switchboard",
		Short: "Turn configured MCP servers into a safe, live tool surface",
		Long: "Switchboard is the MCP layer of an AI agent: it manages MCP server configuration,\n" +
			"launch trust and per-call permissions, and re-exposes every server as one gateway.\n\n" +
			"Tables are aligned under a header on a terminal. Piped, they are tab-separated rows\n" +
			"with fixed columns under a tab-separated header line (skip it with tail -n +2);\n" +
			"--json gives every field by name.",
		SilenceErrors: true,
		SilenceUsage:  true,
		// Subcommands must not define their own PersistentPreRunE: cobra
		// would run theirs instead of this one.
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if err := g.validate(); err != nil {
				return err
			}
			if f := cmd.Flags().Lookup("profile"); f != nil && f.Changed && strings.TrimSpace(g.Profile) == "" {
				// --profile "$UNSET" would show every server: a sub-agent's
				// run, meant to be narrowed, would see them all.
				return Usagef("pass the name of a profile of the settings, or leave --profile out to show every server", "--profile needs a profile's name, not %q", g.Profile)
			}
			if g.Workspace != "" {
				// Before anything is read or written: a mistyped root would
				// otherwise get a "projects" entry or a .switchboard/ folder.
				if st, err := os.Stat(f.abs(g.Workspace)); err != nil || !st.IsDir() {
					return Usagef("pass an existing directory (the project root) to --workspace",
						"--workspace %s: not a directory", g.Workspace)
				}
			}
			if _, err := f.Settings(); err != nil {
				return err
			}
			if err := f.refuseProfile(cmd); err != nil {
				return err
			}
			return f.checkProfile()
		},
	}
	cmd.CompletionOptions.DisableDefaultCmd = true // ours below maps errors to exit codes
	// --version and -v, as the CLIs users have beside it answer (claude,
	// codex, gh): what `switchboard version` prints (cobra answers it
	// ahead of PersistentPreRunE: nothing is read).
	cmd.Version = buildVersion()
	cmd.SetVersionTemplate("switchboard {{.Version}}\nMCP protocol revisions: " + strings.Join(ProtocolRevisions, ", ") + "\n")

	fl := cmd.PersistentFlags()
	fl.StringVar(&g.Workspace, "workspace", "", "project root `DIR` (default: nearest ancestor with .mcp.json, .switchboard/ or .git)")
	fl.StringVar(&g.Settings, "settings", "", "extra settings, inline or in a file: `JSON|FILE`")
	// StringArray, not StringSlice: inline JSON is full of commas.
	fl.StringArrayVar(&g.MCPConfigs, "mcp-config", nil, "add servers from a `FILE|JSON` for this run (repeatable)")
	fl.BoolVar(&g.StrictMCPConfig, "strict-mcp-config", false, "use only the servers given with --mcp-config")
	fl.BoolVar(&g.JSON, "json", false, "print stable JSON on stdout")
	fl.StringVar(&g.Tools, "tools", "", "tool loading `MODIFIERS`, e.g. \"default,Defer(mcp__github__*),NoDefer(mcp__time__now)\"")
	fl.DurationVar(&g.Wait, "wait", DefaultWait, "how long one-shot commands wait for servers still connecting")
	fl.StringVar(&g.LogLevel, "log-level", "warn", "log `LEVEL` on stderr: debug, info, warn or error")
	fl.StringVar(&g.Profile, "profile", "", "show only the servers and tools of the settings' profile `NAME` (docs/configuration.md, Profiles); commands that edit the configuration refuse it")

	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return UsageErr(err, fmt.Sprintf("run '%s --help' for usage", c.CommandPath()))
	})

	cmd.AddCommand(
		newMCPCmd(f),
		NewVersionCmd(f, nil),
		newCompletionCmd(f),
	)
	for _, newCmd := range extraCommands {
		cmd.AddCommand(newCmd(f))
	}
	return cmd
}

// groupRunE is the RunE of a command that only groups subcommands: no
// arguments prints help; anything else is an unknown command (exit 2),
// where cobra would print help and exit 0.
func groupRunE(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return cmd.Help()
	}
	hint := fmt.Sprintf("run '%s --help' for the list of commands", cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's own default, which SuggestionsFor does not apply
	}
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		hint = "did you mean: " + strings.Join(s, ", ") + "?"
	}
	return Usagef(hint, "unknown command %q for %q", args[0], cmd.CommandPath())
}
