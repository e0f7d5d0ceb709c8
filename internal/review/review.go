// Package review holds the words a person reads before approving a
// repository's (project-scope) server: what exactly it would run, what
// changed since it was approved, the sandbox it gets and which of the
// user's variables reach it. It builds them once, as a Doc, for the two
// places a person decides: the terminal (`switchboard mcp approve`, the
// question before a run, written by Doc.WriteText) and the browser console
// (package console, which renders the same Doc as HTML). One builder means
// the two cannot drift apart: a warning added here is shown in both.
//
// Every value in a Doc is already made safe to show (trust.Quote,
// termsafe.Line): escape sequences and reordering characters are visible
// escapes, so a page or a terminal shows exactly what will run. Env values
// of secret-looking keys and all header values are hidden; Options.RedactArgs
// hides secret-looking command-line arguments too (the console, which never
// renders a secret).
package review

import (
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/proc"
	"github.com/switchboard-mcp/switchboard/internal/redact"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
	"github.com/switchboard-mcp/switchboard/trust"
)

// Field is one labelled line of a definition: "command", "env", "sandbox"…
// Consecutive fields with the same label (one per env pair or header) are
// shown under one label.
type Field struct {
	Label string
	Value string
	// Warn says in plain words why this value deserves a second look
	// (an env key that changes how programs load code).
	Warn string
}

// Doc is the review of one project server.
type Doc struct {
	// Server is the server's name; From where it is defined (quoted).
	Server string
	From   string
	// Shadows warn that the server takes the name of one of the user's own.
	Shadows []string
	// Changed, for a stale approval, says when it was approved and what
	// changed ("command, env (added NODE_OPTIONS)"); Was lists the
	// approved values of what changed. Empty for a server never approved.
	ApprovedOn string
	Changed    string
	Was        []Field
	// Fields are what it would run, in order.
	Fields []Field
	// Passed are the user's variables it gets: Base those every
	// repository server gets, Extra those its definition names.
	Passed      bool
	Base, Extra []string
	// Redacted says that values which look secret are hidden (RedactArgs).
	Redacted bool
	// Warning is the review's second line: who wrote the definition and
	// what runs with which rights (Warning's words).
	Warning string
}

// The review's second line (Doc.Warning) says who wrote the definition and
// with what rights it runs: TrustWarning for a server that runs unconfined,
// SandboxedWarning for one the sandbox below confines, the others for a
// remote server, which runs elsewhere.
const (
	TrustWarning           = "The repository wrote this definition, not you: it runs with your rights. Approve it only if you trust exactly this."
	SandboxedWarning       = "The repository wrote this definition, not you: it runs as you, confined by the sandbox below. Approve it only if you trust exactly this."
	RemoteWarning          = "The repository wrote this definition, not you: Switchboard connects to its address and sends what it names below. Approve it only if you trust exactly this."
	HelperWarning          = "The repository wrote this definition, not you: its headersHelper runs with your rights, and the server gets what it prints. Approve it only if you trust exactly this."
	SandboxedHelperWarning = "The repository wrote this definition, not you: its headersHelper runs as you, confined by the sandbox below, and the server gets what it prints. Approve it only if you trust exactly this."
	// RedactedNote is said where values that look secret are hidden.
	RedactedNote = "values that look secret are hidden here; `switchboard mcp approve` shows everything as it is before it asks"
	// RevokeNote says what a revoked approval does to a running server.
	RevokeNote = "A server running now is not stopped; it will ask for approval before it starts again."
)

// Headline is the review's first line.
func (d Doc) Headline() string {
	return fmt.Sprintf("Project server %q (from %s) needs your approval to start.", d.Server, d.From)
}

// Options adjust Build.
type Options struct {
	// Parent is the user's environment (os.Environ), for which variables
	// pass.
	Parent []string
	// Sandbox is what a stdio server would be confined to
	// (host.SandboxOf), HelperSandbox what a remote server's headersHelper
	// would be (host.HelperSandboxOf); nil where it would run unconfined.
	// The review says so in words (SandboxWords) and in its warning.
	Sandbox, HelperSandbox *config.SandboxPolicy
	// RedactArgs hides command-line arguments and URL parts that look
	// secret (redact.CommandArgs, redact.URL): the console renders no
	// secret, and sends people to the terminal to see them.
	RedactArgs bool
}

// Build makes the review of rs under verdict v.
func Build(rs *config.ResolvedServer, v trust.Verdict, o Options) Doc {
	def := rs.Written
	d := Doc{Server: rs.Name, From: trust.Quote(rs.File), Warning: Warning(rs, o.Sandbox, o.HelperSandbox)} // a directory name can hold escape sequences too
	if rs.File == "" {
		d.From = "a project file"
	}
	for _, sc := range rs.Shadows {
		if sc == config.ScopeUser {
			// Project scope wins the name over user scope, so once approved it
			// also inherits every rule the user wrote for that name.
			d.Shadows = append(d.Shadows, fmt.Sprintf("It has the name of your own server %q (user scope) and replaces it in this workspace: your permission rules for mcp__%s apply to it once approved.", rs.Name, rs.Name))
		}
	}
	known := redact.Secrets(def.Env, def.Headers)
	args := func(a []string) []string {
		if o.RedactArgs {
			return redact.CommandArgs(a, known...)
		}
		return a
	}
	if v.Status == trust.Stale && v.Previous != nil {
		d.ApprovedOn = v.Previous.ApprovedAt.Local().Format("2006-01-02 15:04")
		d.Changed = termsafe.Line(v.Describe(def))
		prev := v.Previous.Definition
		shownCmd := false
		for _, f := range v.Changed {
			switch f {
			case "command", "args":
				if !shownCmd {
					d.Was = append(d.Was, Field{Label: "command", Value: trust.CommandLine(prev.Command, args(prev.Args))})
				}
				shownCmd = true
			case "cwd":
				d.Was = append(d.Was, Field{Label: "cwd", Value: quoteOrNone(prev.Cwd)})
			case "url":
				d.Was = append(d.Was, Field{Label: "url", Value: quoteOrNone(d.url(prev.URL, o.RedactArgs, known))})
			case "headersHelper":
				d.Was = append(d.Was, Field{Label: "headersHelper", Value: quoteOrNone(prev.HeadersHelper)})
			case "env_passthrough":
				d.Was = append(d.Was, Field{Label: "env_passthrough", Value: QuoteList(prev.EnvPassthrough)})
			}
		}
	}
	d.Fields = definition(def, o.RedactArgs)
	if names := argSecrets(def); len(names) > 0 {
		// A ${secret:NAME} there is refused (config); a secret-named
		// variable is the user's to judge, so it is said, not refused.
		for i, f := range d.Fields {
			if f.Label == "command" {
				what := "the value of your " + names[0] + " goes"
				if len(names) > 1 {
					what = "the values of your " + strings.Join(names, ", ") + " go"
				}
				d.Fields[i].Warn = termsafe.Line(what + " on its command line, which every user of this machine can read (ps): a secret belongs in env")
			}
		}
	}
	if config.InferType(def) != config.TypeStdio {
		// A stdio server's variables are listed below (Passed); a remote
		// server's ${VAR} put the values of the user's variables into
		// what goes to its address, which the url and header lines show
		// only as references, one by one.
		if names := sentVariables(def); len(names) > 0 {
			d.Fields = append(d.Fields, Field{Label: "sends", Value: "the values of your variables " + termsafe.Line(strings.Join(names, ", ")) + " to its address, in its url and headers"})
		}
	}
	if len(def.EnvPassthrough) > 0 {
		d.Fields = append(d.Fields, Field{Label: "env_passthrough", Value: QuoteList(def.EnvPassthrough)})
	}
	if words := SandboxWords(rs, o.Sandbox, o.HelperSandbox, nil); words != "" {
		d.Fields = append(d.Fields, Field{Label: "sandbox", Value: termsafe.Line(words)})
	}
	if def.HeadersHelper != "" {
		// The command line is approved, not what it runs: a script it
		// names can change without a question, as a server's own code can.
		d.Fields = append(d.Fields, Field{Label: "note", Value: "an edit to what the headersHelper runs (a script of the repository) is not asked about again: only its command line is approved"})
	}
	if config.InferType(def) == config.TypeStdio || def.HeadersHelper != "" {
		d.Passed = true
		named := map[string]bool{}
		for _, n := range trust.Named(def) {
			named[n] = true
		}
		inBase := map[string]bool{}
		for _, n := range trust.BaseEnv() {
			inBase[n] = true
		}
		for _, n := range trust.PassedVariables(rs, o.Parent) {
			if named[n] && !inBase[n] && !strings.HasPrefix(n, "LC_") {
				d.Extra = append(d.Extra, termsafe.Line(n))
			} else {
				d.Base = append(d.Base, n)
			}
		}
	}
	if o.RedactArgs {
		// Said only when something was hidden that the terminal shows.
		plain := definition(def, false)
		for i, f := range d.Fields {
			if i < len(plain) && f.Value != plain[i].Value && (f.Label == "command" || f.Label == "url" || f.Label == "env") {
				d.Redacted = true
			}
		}
		for _, f := range d.Was {
			if strings.Contains(f.Value, redact.Placeholder) {
				d.Redacted = true
			}
		}
	}
	return d
}

// argSecrets are the secret-named variables (redact.IsSecretKey) whose
// ${VAR} def's command or arguments name, defaults included: sorted,
// without duplicates.
func argSecrets(def config.Server) []string {
	seen := map[string]bool{}
	record := func(name string) (string, bool) {
		if redact.IsSecretKey(name) {
			seen[name] = true
		}
		return "", false
	}
	config.Expand(def.Command, record)
	for _, a := range def.Args {
		config.Expand(a, record)
	}
	return slices.Sorted(maps.Keys(seen))
}

// sentVariables are the variables whose ${VAR} the url and header values
// of def name, defaults included: sorted, without duplicates.
func sentVariables(def config.Server) []string {
	seen := map[string]bool{}
	record := func(name string) (string, bool) {
		seen[name] = true
		return "", false // unset, so that every default is visited too
	}
	config.Expand(def.URL, record)
	for _, v := range def.Headers {
		config.Expand(v, record)
	}
	return slices.Sorted(maps.Keys(seen))
}

func (d Doc) url(u string, hide bool, known []string) string {
	if hide {
		return redact.URL(u, known...)
	}
	return u
}

// Definition lists what def would run, literally, for a person deciding
// whether to let it: type, command line, cwd, url, every env pair
// (secret-named values hidden, keys that change how programs load code
// flagged), headers (values hidden), a headersHelper and the secrets it
// names.
func Definition(def config.Server) []Field { return definition(def, false) }

func definition(def config.Server, hide bool) []Field {
	known := redact.Secrets(def.Env, def.Headers)
	out := []Field{{Label: "type", Value: string(config.InferType(def))}}
	if def.Command != "" || len(def.Args) > 0 {
		a := def.Args
		if hide {
			a = redact.CommandArgs(a, known...)
		}
		out = append(out, Field{Label: "command", Value: trust.CommandLine(def.Command, a)})
	}
	if def.Cwd != "" {
		out = append(out, Field{Label: "cwd", Value: trust.Quote(def.Cwd)})
	}
	if def.URL != "" {
		u := def.URL
		if hide {
			u = redact.URL(u, known...)
		}
		out = append(out, Field{Label: "url", Value: trust.Quote(u)})
	}
	for _, k := range sortedKeys(def.Env) {
		val := trust.Quote(def.Env[k])
		if redact.IsSecretKey(k) || hide && redact.LooksSecret(def.Env[k]) {
			val = RedactedValue(def.Env[k])
		}
		out = append(out, Field{Label: "env", Value: trust.Quote(k) + "=" + val, Warn: trust.Danger(k)})
	}
	for _, k := range sortedKeys(def.Headers) {
		out = append(out, Field{Label: "headers", Value: trust.Quote(k) + ": " + RedactedValue(def.Headers[k])})
	}
	if def.HeadersHelper != "" {
		out = append(out, Field{Label: "headersHelper", Value: trust.Quote(def.HeadersHelper)})
	}
	if names := config.SecretNames(def); len(names) > 0 {
		out = append(out, Field{Label: "secrets", Value: termsafe.Line(strings.Join(names, ", ")) + ", read from your own credential store when it starts"})
	}
	return out
}

// textLabels are the terminal's labels, padded so that values line up.
var textLabels = map[string]string{
	"type":    "  type:     ",
	"command": "  command:  ",
	"cwd":     "  cwd:      ",
	"url":     "  url:      ",
	"env":     "  env:      ",
	"headers": "  headers:  ",
	"secrets": "  secrets:  ",
	"sends":   "  sends:    ",
	"sandbox": "  sandbox:  ",
	"note":    "  note:     ",
}

// WriteFields writes fields as the terminal shows a definition.
func WriteFields(w io.Writer, fields []Field) {
	prev := ""
	for _, f := range fields {
		label, ok := textLabels[f.Label]
		switch {
		case f.Label == "headersHelper":
			label = "  headersHelper (runs in a shell at every connect): "
		case f.Label == "env_passthrough":
			label = "  env_passthrough: "
		case !ok:
			label = "  " + f.Label + ": "
		case f.Label == prev && (f.Label == "env" || f.Label == "headers"):
			label = "            "
		}
		fmt.Fprintf(w, "%s%s\n", label, f.Value)
		if f.Warn != "" {
			fmt.Fprintf(w, "            ⚠ %s\n", f.Warn)
		}
		prev = f.Label
	}
}

// WriteText writes the review as the terminal shows it, before its
// question.
func (d Doc) WriteText(w io.Writer) {
	fmt.Fprintf(w, "\n%s\n", d.Headline())
	fmt.Fprintln(w, d.Warning)
	for _, s := range d.Shadows {
		fmt.Fprintf(w, "  ⚠ %s\n", s)
	}
	if d.ApprovedOn != "" {
		fmt.Fprintf(w, "\n  It CHANGED since you approved it on %s: %s\n", d.ApprovedOn, d.Changed)
		for _, f := range d.Was {
			switch f.Label {
			case "command":
				fmt.Fprintf(w, "    command was: %s\n", f.Value)
			case "cwd", "url":
				fmt.Fprintf(w, "    %s was:  %s\n", f.Label, f.Value)
			default:
				fmt.Fprintf(w, "    %s was: %s\n", f.Label, f.Value)
			}
		}
	}
	fmt.Fprintln(w)
	WriteFields(w, d.Fields)
	if d.Passed {
		fmt.Fprintf(w, "  %s %s\n", PassedLabel, OrNone(d.Base))
		if len(d.Extra) > 0 {
			fmt.Fprintf(w, "    %s %s\n", ExtraLabel, strings.Join(d.Extra, ", "))
		}
	}
	if d.Redacted {
		fmt.Fprintf(w, "  note:     %s\n", RedactedNote)
	}
	fmt.Fprintln(w)
}

// PassedLabel and ExtraLabel introduce the variables a server gets.
const (
	PassedLabel = "from your environment it gets only:"
	ExtraLabel  = "and, because the definition names them:"
)

// RedactedValue hides a secret value but says which of the user's
// variables it is made from: that the repository's server gets
// ${GITHUB_TOKEN} is exactly what a person must see.
func RedactedValue(v string) string {
	refs := trust.References(config.Server{Command: v})
	for i, r := range refs {
		refs[i] = "${" + r + "}"
	}
	secrets, _ := config.SecretRefs(v)
	for _, n := range secrets {
		refs = append(refs, "${secret:"+n+"}")
	}
	if len(refs) == 0 {
		return redact.Placeholder
	}
	return redact.Placeholder + " (made from " + strings.Join(refs, ", ") + ")"
}

// QuoteList quotes each item (trust.Quote) and joins them, or says
// "(nothing)".
func QuoteList(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = trust.Quote(s)
	}
	return OrNone(q)
}

func quoteOrNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return trust.Quote(s)
}

// OrNone joins l, or says "(nothing)".
func OrNone(l []string) string {
	if len(l) == 0 {
		return "(nothing)"
	}
	return strings.Join(l, ", ")
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

// Warning is the review's second line for rs: a sandboxed server (or
// headersHelper) is not said to run with all of the user's rights.
// sandbox and helper are as for SandboxWords.
func Warning(rs *config.ResolvedServer, sandbox, helper *config.SandboxPolicy) string {
	switch {
	case config.InferType(rs.Effective) == config.TypeStdio && sandbox != nil:
		return SandboxedWarning
	case config.InferType(rs.Effective) == config.TypeStdio:
		return TrustWarning
	case rs.Effective.HeadersHelper == "":
		return RemoteWarning
	case helper != nil:
		return SandboxedHelperWarning
	}
	return HelperWarning
}

// SandboxWords says in plain words what rs can reach ("" for a remote
// server without a repository's headersHelper, which runs elsewhere), and
// why it will not start where this system cannot sandbox it. sandbox is
// the stdio server's sandbox (host.SandboxOf), helper the headersHelper's
// of a remote one (host.HelperSandboxOf); tilde shortens paths (nil: as
// they are).
func SandboxWords(rs *config.ResolvedServer, sandbox, helper *config.SandboxPolicy, tilde func(string) string) string {
	if config.InferType(rs.Effective) != config.TypeStdio {
		if rs.Effective.HeadersHelper == "" || rs.Trust != config.TrustRepo {
			return ""
		}
		s := "headersHelper " + config.DescribeSandbox(helper, tilde)
		if helper != nil {
			if why := proc.SandboxSupport(); why != "" {
				s += " — but it cannot run here: " + why
			}
		}
		return s
	}
	s := config.DescribeSandbox(sandbox, tilde)
	if sandbox != nil {
		if why := proc.SandboxSupport(); why != "" {
			s += " — but it cannot start here: " + why
		}
	}
	return s
}

// SandboxWorkspace is the workspace a server's sandbox is drawn around: the
// run's, or for a project server outside any workspace its file's folder.
func SandboxWorkspace(rs *config.ResolvedServer, workspace string) string {
	if workspace == "" && rs.Scope == config.ScopeProject && rs.File != "" {
		return filepath.Dir(rs.File)
	}
	return workspace
}
