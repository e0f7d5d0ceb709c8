package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/secretstore"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
	// The command keeps secrets in the OS credential store where one
	// answers; a program on the front door links it by this import too.
	_ "github.com/switchboard-mcp/switchboard/oskeyring"
)

func init() {
	registerCommand(newSecretCmd)
}

// SecretOptions are the inputs of `switchboard secret …`.
type SecretOptions struct {
	IO *IOStreams
	// Store is the user's secret store.
	Store *secretstore.Store
	// Config loads the configuration, to say where each secret is used.
	Config func() (*config.Resolved, error)
	Tilde  func(string) string
	Name   string
	JSON   bool
	// Principal, if set, makes Store the view of that team gateway
	// principal's own values (--principal).
	Principal string
}

func newSecretCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "secret",
		Short: "Keep secrets in your credential store, for ${secret:NAME} references",
		Long: `A server's env values, header values and url may refer to a secret as
${secret:NAME}: its value is read from your credential store when the server
starts, so it never sits in a file (docs/security.md, Secrets). The store is
the operating system's: the Secret Service on Linux (GNOME Keyring, KWallet),
the macOS Keychain, the Windows Credential Manager. Where none answers, values
go to an encrypted file under ~/.switchboard/secrets, and every command that
writes there says so. $SWITCHBOARD_SECRET_STORE=os|file|auto forces the choice.

A project server's secrets are read only once you approve it, and only the
ones its definition names.`,
		Args: cobra.ArbitraryArgs,
		RunE: groupRunE,
	}
	cmd.PersistentFlags().String("principal", "", "the team gateway principal `NAME` whose own values these are (its key's or its access token's name), for the gateway's per-member servers (docs/gateway.md)")
	cmd.AddCommand(newSecretSetCmd(f, nil), newSecretListCmd(f, nil), newSecretRmCmd(f, nil))
	return cmd
}

// secretOpts are the options of a secret command; --principal, when
// given, turns the store to that principal's namespace.
func secretOpts(f *Factory, cmd *cobra.Command) (*SecretOptions, error) {
	o := &SecretOptions{IO: f.IO, Store: f.secretStore(), Config: f.LoadConfig, Tilde: f.tilde, JSON: f.global().JSON}
	if fl := cmd.Flags().Lookup("principal"); fl != nil && fl.Value.String() != "" {
		o.Principal = fl.Value.String()
		// A key's principal, or an access token's (any name its claim
		// gives, as gateway.PrincipalFromClaims takes it).
		p := o.Principal
		if p == gateway.SharedTokenPrincipal {
			return nil, Usagef("the shared token's calls use your own values: leave --principal out", "--principal %s is the shared token's caller", p)
		}
		if len(p) > gateway.MaxPrincipalName || !utf8.ValidString(p) || strings.TrimSpace(p) != p || strings.IndexFunc(p, unicode.IsControl) >= 0 {
			return nil, Usagef("the name of a key's principal (`switchboard gateway key list`) or of an access token's subject", "--principal %s is not a name a principal can have", quoteName(p))
		}
		o.Store = o.Store.In(memberNamespace(o.Principal))
	}
	return o, nil
}

// whose is " for principal NAME" when the command is about a
// principal's own values.
func (o *SecretOptions) whose() string {
	if o.Principal == "" {
		return ""
	}
	return " for principal " + o.Principal
}

// secretName checks a NAME argument (exit 2 when it cannot be one).
func secretName(name string) error {
	if why := config.SecretNameProblem(name); why != "" {
		return Usagef("a secret's name is 1 to 128 letters, digits, '_', '.' or '-', e.g. GITHUB_TOKEN", "secret name %s %s", quoteName(name), why)
	}
	return nil
}

// secretNameRunE is the RunE of a command on one secret NAME: runF, the
// test seam, else run.
func secretNameRunE(f *Factory, runF, run func(context.Context, *SecretOptions) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		o, err := secretOpts(f, cmd)
		if err != nil {
			return err
		}
		o.Name = args[0]
		if runF != nil {
			return runF(cmd.Context(), o)
		}
		return run(cmd.Context(), o)
	}
}

func quoteName(s string) string { return termsafe.Line(fmt.Sprintf("%q", s)) }

func newSecretSetCmd(f *Factory, runF func(context.Context, *SecretOptions) error) *cobra.Command {
	return &cobra.Command{
		Use:   "set NAME",
		Short: "Store a secret's value (typed at a prompt without echo, or piped on stdin)",
		Long: `Store the value of secret NAME in your credential store, replacing any. On a
terminal the value is asked for without echo; otherwise it is read from stdin
(one trailing newline is dropped). It is never taken from the command line,
where your shell history and every user's ps would see it.`,
		Example: `  switchboard secret set GITHUB_TOKEN
  gh auth token | switchboard secret set GITHUB_TOKEN
  then, in a server's definition: "env": {"GITHUB_TOKEN": "${secret:GITHUB_TOKEN}"}`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return Usagef("e.g. switchboard secret set GITHUB_TOKEN", "secret set needs the secret's NAME")
			case len(args) > 1:
				return Usagef("type it at the prompt, or pipe it: printf %s \"$VALUE\" | switchboard secret set "+args[0],
					"the value is never taken from the command line: your shell history and every user's ps would see it")
			}
			return secretName(args[0])
		},
		RunE: secretNameRunE(f, runF, secretSetRun),
	}
}

func secretSetRun(ctx context.Context, o *SecretOptions) error {
	value, err := readSecretValue(ctx, o.IO, fmt.Sprintf("Value of %s (not shown): ", o.Name))
	if err != nil {
		return err
	}
	loc, err := o.Store.Set(ctx, o.Name, value)
	if err != nil {
		return FailureErr(err, storeHint(err))
	}
	fmt.Fprintf(o.IO.ErrOut, "Stored %s%s in %s.\n", o.Name, o.whose(), o.Tilde(loc.Name))
	printStoreNote(o.IO.ErrOut, loc, o.Tilde)
	if users := secretUsers(o.Config, o.Tilde)[o.Name]; len(users) > 0 {
		fmt.Fprintf(o.IO.ErrOut, "Used by %s: it reads the new value when it next starts.\n", strings.Join(users, ", "))
	}
	return nil
}

// readSecretValue reads a value: at a prompt without echo on a terminal,
// else all of stdin (one trailing newline dropped).
func readSecretValue(ctx context.Context, s *IOStreams, prompt string) (string, error) {
	if fh, ok := s.In.(*os.File); ok && term.IsTerminal(int(fh.Fd())) {
		fmt.Fprint(s.ErrOut, prompt)
		v, err := readAnswer(ctx, s, true)
		if err != nil {
			return "", FailureErr(fmt.Errorf("reading the value: %w", err), "")
		}
		if v == "" {
			return "", Usagef("type the value, or pipe it on stdin", "no value given: nothing was stored")
		}
		return v, nil
	}
	b, err := io.ReadAll(io.LimitReader(s.In, secretstore.MaxValue+2))
	if err != nil {
		return "", FailureErr(fmt.Errorf("reading the value from stdin: %w", err), "")
	}
	v := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if why := secretstore.ValueProblem(v); why != "" {
		return "", Usagef("pipe the value on stdin, e.g. printf %s \"$VALUE\" | switchboard secret set NAME", "%s: nothing was stored", why)
	}
	return v, nil
}

// printStoreNote says, when values went to the encrypted file, why and
// what protects it: never silently the weaker place.
func printStoreNote(w io.Writer, loc secretstore.Location, tilde func(string) string) {
	if loc.Note != "" {
		fmt.Fprintf(w, "note: %s\n", termsafe.Line(tilde(loc.Note)))
	}
}

// storeHint is the fix for a store that failed.
func storeHint(err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "is locked"):
		return "unlock your keyring, then try again"
	case strings.Contains(msg, "SWITCHBOARD_SECRET_STORE"):
		return "set SWITCHBOARD_SECRET_STORE to os, file or auto (or unset it)"
	}
	return ""
}

func newSecretListCmd(f *Factory, runF func(context.Context, *SecretOptions) error) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List secret names, where each is kept and which servers use it (never values)",
		Long: `List the secrets of your store and those the configuration refers to: each
name, where its value is kept (os: the OS credential store, file: the encrypted
file; "not set" for a name a server uses but the store lacks) and the servers
that use it, with their files. Values are never shown.

Piped, the first line is the header (NAME STORE USED BY, tab-separated), then
one tab-separated row per secret with those three columns: its name, os, file
or not set, and the servers that use it ("-" for none). Skip the header with
tail -n +2, or use --json.

With --json: [{name, stored, store, updated, usedBy: [{server, scope, file}]}].`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o, err := secretOpts(f, cmd)
			if err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return secretListRun(cmd.Context(), o)
		},
	}
}

type secretUseJSON struct {
	Server string `json:"server"`
	Scope  string `json:"scope"`
	File   string `json:"file,omitempty"`
}

type secretJSON struct {
	Name    string          `json:"name"`
	Stored  bool            `json:"stored"`
	Store   string          `json:"store,omitempty"`
	Updated string          `json:"updated,omitempty"`
	UsedBy  []secretUseJSON `json:"usedBy"`
}

// secretUses lists, per secret name, the servers of cfg that use it.
func secretUses(cfg *config.Resolved) map[string][]secretUseJSON {
	out := map[string][]secretUseJSON{}
	if cfg == nil {
		return out
	}
	for _, rs := range cfg.Servers {
		for _, n := range rs.Secrets {
			out[n] = append(out[n], secretUseJSON{Server: rs.Name, Scope: string(rs.Scope), File: rs.File})
		}
	}
	return out
}

// secretUsers renders secretUses for people: "gh (~/.switchboard/mcp.json)".
func secretUsers(load func() (*config.Resolved, error), tilde func(string) string) map[string][]string {
	cfg, _ := load()
	out := map[string][]string{}
	for name, uses := range secretUses(cfg) {
		for _, u := range uses {
			out[name] = append(out[name], u.text(tilde))
		}
	}
	return out
}

// text is "server (file)" for people.
func (u secretUseJSON) text(tilde func(string) string) string {
	if u.File == "" {
		return u.Server
	}
	return u.Server + " (" + tilde(u.File) + ")"
}

func secretListRun(_ context.Context, o *SecretOptions) error {
	entries, err := o.Store.List()
	if err != nil {
		return FailureErr(err, "")
	}
	cfg, _ := o.Config()
	uses := secretUses(cfg)
	rows := map[string]*secretJSON{}
	for _, e := range entries {
		rows[e.Name] = &secretJSON{Name: e.Name, Stored: true, Store: e.Kind, Updated: e.Updated.Format(time.RFC3339), UsedBy: []secretUseJSON{}}
	}
	for name, us := range uses {
		r := rows[name]
		if r == nil {
			r = &secretJSON{Name: name, UsedBy: []secretUseJSON{}}
			rows[name] = r
		}
		r.UsedBy = us
	}
	names := make([]string, 0, len(rows))
	for n := range rows {
		names = append(names, n)
	}
	sort.Strings(names)
	list := make([]secretJSON, 0, len(names))
	for _, n := range names {
		list = append(list, *rows[n])
	}
	if o.JSON {
		return printJSON(o.IO.Out, list)
	}
	if len(list) == 0 {
		fmt.Fprintln(o.IO.ErrOut, "No secrets: store one with `switchboard secret set NAME`, then refer to it as ${secret:NAME}.")
		return nil
	}
	t := newTablePrinter(o.IO, "name", "store", "used by")
	for _, r := range list {
		store := r.Store
		if !r.Stored {
			store = "not set"
		}
		var by []string
		for _, u := range r.UsedBy {
			by = append(by, u.text(o.Tilde))
		}
		t.AddRow(r.Name, store, dashEmpty(strings.Join(by, ", ")))
	}
	return t.Render()
}

func newSecretRmCmd(f *Factory, runF func(context.Context, *SecretOptions) error) *cobra.Command {
	return &cobra.Command{
		Use:     "rm NAME",
		Aliases: []string{"remove"},
		Short:   "Remove a secret from your store",
		Long: `Remove secret NAME from your credential store. A server that uses it keeps
running with the value it started with; its next start fails, naming the
secret, until it is set again.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return Usagef("e.g. switchboard secret rm GITHUB_TOKEN", "secret rm takes one NAME")
			}
			return secretName(args[0])
		},
		RunE: secretNameRunE(f, runF, secretRmRun),
	}
}

func secretRmRun(ctx context.Context, o *SecretOptions) error {
	had, err := o.Store.Delete(ctx, o.Name)
	if err != nil {
		return FailureErr(err, storeHint(err))
	}
	if !had {
		return FailureErr(fmt.Errorf("no secret named %s%s in your store", o.Name, o.whose()), "`switchboard secret list` shows the names")
	}
	fmt.Fprintf(o.IO.ErrOut, "Removed %s%s.\n", o.Name, o.whose())
	if users := secretUsers(o.Config, o.Tilde)[o.Name]; len(users) > 0 {
		fmt.Fprintf(o.IO.ErrOut, "note: still used by %s, which will not start until it is set again (switchboard secret set %s)\n", strings.Join(users, ", "), o.Name)
	}
	return nil
}

// secretStore is the user's store of this run, opened once.
func (f *Factory) secretStore() *secretstore.Store {
	if f.secrets == nil {
		f.secrets = secretstore.ForHome(f.Home(), f.Getenv)
	}
	return f.secrets
}

// secretHint is the advice added to a server's reason when a secret kept
// it from starting.
func secretHint(err error) string {
	var se *config.SecretError
	if !errors.As(err, &se) {
		return ""
	}
	if errors.Is(err, secretstore.ErrNotFound) {
		return fmt.Sprintf("run `switchboard secret set %s`", se.Secret)
	}
	return storeHint(err)
}

// sessionSecrets is a session's secret source: the user's store, and, on
// a terminal, the person, asked once for a secret the store lacks (the
// value is stored). Headless, a missing secret is the server's error,
// which names it and the command that sets it.
type sessionSecrets struct {
	store *secretstore.Store
	// ask asks for a value (nil: nobody to ask); "" means none given.
	ask   func(ctx context.Context, server, name string) (string, error)
	notes io.Writer
	tilde func(string) string

	mu    sync.Mutex // one question at a time
	asked map[string]bool
}

func (s *sessionSecrets) Secret(ctx context.Context, server, name string) (string, error) {
	v, err := s.store.Get(ctx, name)
	if s.ask == nil || !errors.Is(err, secretstore.ErrNotFound) {
		return v, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// Another server may have had it asked for meanwhile.
	if v, err2 := s.store.Get(ctx, name); err2 == nil {
		return v, nil
	}
	if s.asked[name] {
		return "", err // asked once already this run
	}
	if s.asked == nil {
		s.asked = map[string]bool{}
	}
	s.asked[name] = true
	value, aerr := s.ask(ctx, server, name)
	if aerr != nil || value == "" {
		return "", err
	}
	loc, serr := s.store.Set(ctx, name, value)
	if serr != nil {
		return "", serr
	}
	fmt.Fprintf(s.notes, "Stored %s in %s.\n", name, s.tilde(loc.Name))
	printStoreNote(s.notes, loc, s.tilde)
	return value, nil
}

// askSecret asks the person at the session's terminal for a secret's
// value, without echo.
func (s *session) askSecret(ctx context.Context, server, name string) (string, error) {
	defer s.question()()
	release := s.line.Hold()
	defer release()
	fh, ok := s.opts.IO.In.(*os.File)
	if !ok {
		return "", errors.New("not a terminal")
	}
	restore, ok := withoutEcho(fh)
	if !ok {
		return "", errors.New("cannot turn the terminal's echo off")
	}
	defer restore()
	w := s.opts.IO.ErrOut
	fmt.Fprintf(w, "\nServer %s uses secret %s, which is not in your store.\n", quoteName(server), name)
	fmt.Fprintf(w, "Value of %s (not shown; Enter alone leaves the server stopped): ", name)
	v, err := s.input().ReadLine(ctx)
	fmt.Fprintln(w)
	if err != nil {
		return "", err
	}
	if why := secretstore.ValueProblem(v); v != "" && why != "" {
		fmt.Fprintf(w, "  %s: not stored\n", why)
		return "", errors.New(why)
	}
	return v, nil
}

// sessionSecretSource returns the secret source of a session.
func (s *session) secretSource(store *secretstore.Store) host.SecretSource {
	src := &sessionSecrets{store: store, notes: s.opts.IO.ErrOut, tilde: s.opts.tilde}
	if s.opts.IO.CanPrompt {
		src.ask = s.askSecret
	}
	return src
}
