// Package testserver holds the real MCP servers that Switchboard's tests
// talk to: fault servers that crash, hang and flood, hostile ones, and the
// demo server of internal/demoserver under the name "demo".
//
// It is for tests only: _test.go files and test-only programs (bench)
// import it, and the switchboard binary never links it (internal/archtest
// checks both the import graph and the built binary).
//
// Every server is written with the official Go SDK and behaves like a real
// third-party server: a crash really exits the process, a hang really blocks,
// a flood really fills the stderr pipe. Tests use them in three ways:
//
//   - As a child process, through the fork-exec trick. The test binary's
//     TestMain (or a test-only program's main) calls [MaybeRun] first;
//     [Command] returns the argv that re-executes the current binary as the
//     named server. This is the way to test spawning, killing, hangs, floods
//     and crashes.
//   - In process, with [NewServer] and an in-memory transport, where process
//     behaviour does not matter (only the servers that need no process of
//     their own: see [Names] and [InProcess]).
//   - Over HTTP, with testhttp.Start (package testserver/testhttp): a loopback server with Streamable HTTP at
//     /mcp and the legacy SSE transport at /sse, optionally requiring headers.
//
// Servers take flags after their name (each has its own flag.FlagSet), e.g.
// Command("flap", "-calls", "2"). [Describe] lists the servers and their flags;
// the package tests prove each one behaves as documented.
package testserver

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/demoserver"
	"github.com/switchboard-mcp/switchboard/internal/jsonl"
)

// Arg is the first argument that makes [MaybeRun] run a test server instead
// of the program's normal main.
const Arg = "__switchboard-testserver"

// MaybeRun runs a test server and exits if the process was started by
// [Command]: os.Args[1] == [Arg], os.Args[2] names the server and the rest are
// its flags. Otherwise it returns at once. Call it first in main or TestMain.
//
// The exit status is 0 when the server ends normally (stdin closed), the
// server's own status for the fault servers that exit on purpose, and 2 with a
// message on stderr for an unknown server or bad flags.
//
// It also serves internal/demoserver when the process was started by
// demoserver.Command, so that a test binary whose TestMain calls MaybeRun
// can stand in for the switchboard binary in `switchboard demo`.
func MaybeRun() {
	demoserver.MaybeRun()
	if len(os.Args) < 3 || os.Args[1] != Arg {
		return
	}
	// Stdin through the runtime's poller, not a blocking read(2): see
	// jsonl.Stdin for why a Go 1.26 process reading a pipe must.
	in, restore := jsonl.Stdin()
	err := Run(context.Background(), os.Args[2], os.Args[3:], in, os.Stdout, os.Stderr)
	restore()
	os.Exit(exitStatus(err, os.Stderr))
}

// Command returns the program and arguments that run server name as a child
// process: the current executable, [Arg], name and args. Put them in a stdio
// server config; the executable must call [MaybeRun] first.
func Command(name string, args ...string) (string, []string) {
	exe, err := os.Executable()
	if err != nil {
		panic(fmt.Sprintf("testserver: cannot find the current executable: %v", err))
	}
	return exe, append([]string{Arg, name}, args...)
}

// Run runs server name, configured by args, speaking newline-delimited
// JSON-RPC over in and out and writing diagnostics to errw. It returns when
// the client closes in (nil), ctx is cancelled, or the server ends on purpose.
//
// Run is meant to be the whole life of a child process: some fault servers
// call os.Exit themselves (crash-mid-call, flap) or change signal handling
// (ignore-stdin-eof). An error that carries an exit status (fault servers that
// exit on purpose) makes [MaybeRun] exit with that status.
func Run(ctx context.Context, name string, args []string, in io.Reader, out io.Writer, errw io.Writer) error {
	def, ok := registry[name]
	if !ok {
		return usageError{fmt.Errorf("unknown test server %q (known: %s)", name, strings.Join(Names(), ", "))}
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(errw)
	p := &proc{in: in, out: &lockedWriter{w: out}, errw: &lockedWriter{w: errw}}
	start := def.setup(fs, p)
	if err := fs.Parse(args); err != nil {
		return usageError{fmt.Errorf("%s: %w", name, err)}
	}
	return start(ctx)
}

// Names returns the names of every server, sorted.
func Names() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// InProcess reports whether server name can be built by [NewServer] and
// served in process (and so by [testhttp.Start]). The others need a process of
// their own because they exit, hang before the SDK sees a message, or write
// around the SDK to stdout.
func InProcess(name string) bool {
	def, ok := registry[name]
	return ok && def.inProcess
}

// Describe returns a one-line description of server name and the usage of its
// flags, for error messages and docs. It returns "" for an unknown name.
func Describe(name string) string {
	def, ok := registry[name]
	if !ok {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", name, def.doc)
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(&b)
	def.setup(fs, &proc{in: strings.NewReader(""), out: &lockedWriter{w: io.Discard}, errw: &lockedWriter{w: io.Discard}})
	fs.PrintDefaults()
	return b.String()
}

// An Option configures [NewServer].
type Option func(*options)

type options struct {
	args   []string
	stderr io.Writer
}

// WithArgs passes flags to the server, as [Command] would after its name.
func WithArgs(args ...string) Option {
	return func(o *options) { o.args = append(o.args, args...) }
}

// WithStderr sets where the server writes its diagnostics (default: discard).
func WithStderr(w io.Writer) Option {
	return func(o *options) { o.stderr = w }
}

// NewServer builds server name for in-process or HTTP use. It panics if the
// name is unknown, the server needs its own process (see [InProcess]) or the
// flags are wrong: all programmer errors in a test.
func NewServer(name string, opts ...Option) *mcp.Server {
	s, err := newServer(name, opts...)
	if err != nil {
		panic(err)
	}
	return s
}

func newServer(name string, opts ...Option) (*mcp.Server, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.stderr == nil {
		o.stderr = io.Discard
	}
	def, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("testserver: unknown server %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	if !def.inProcess {
		return nil, fmt.Errorf("testserver: server %q only runs as a process (use Command)", name)
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	p := &proc{in: strings.NewReader(""), out: &lockedWriter{w: io.Discard}, errw: &lockedWriter{w: o.stderr}}
	def.setup(fs, p)
	if err := fs.Parse(o.args); err != nil {
		return nil, fmt.Errorf("testserver: %s: %w", name, err)
	}
	if p.build == nil {
		return nil, fmt.Errorf("testserver: server %q has no in-process form", name)
	}
	return p.build(), nil
}

// A serverDef is one entry of the registry. setup registers the server's
// flags on fs and returns the function that runs it once flags are parsed;
// servers that can run in process also set p.build.
type serverDef struct {
	doc       string
	inProcess bool
	setup     func(fs *flag.FlagSet, p *proc) func(context.Context) error
}

// proc is what a server runs with: its stdio and, for SDK-built servers, the
// function that builds the *mcp.Server from the parsed flags.
type proc struct {
	in    io.Reader
	out   *lockedWriter
	errw  *lockedWriter
	build func() *mcp.Server
	// pidFile, if set, gets this process's pid appended when serving starts.
	pidFile string
}

// registry is filled by the init functions of the server files.
var registry = map[string]serverDef{}

func register(name string, def serverDef) {
	if _, dup := registry[name]; dup {
		panic("testserver: duplicate server " + name)
	}
	registry[name] = def
}

// serve runs an SDK server over the process's stdio until the client closes
// stdin or ctx ends.
func (p *proc) serve(ctx context.Context, s *mcp.Server, in io.Reader) error {
	if err := p.recordPID(os.Getpid()); err != nil {
		return err
	}
	t := &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{p.out}}
	err := s.Run(ctx, t)
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// recordPID appends pid to the -pid-file, if any.
func (p *proc) recordPID(pid int) error {
	if p.pidFile == "" {
		return nil
	}
	f, err := os.OpenFile(p.pidFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("pid file: %w", err)
	}
	_, err = fmt.Fprintln(f, pid)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// buildAndServe is the usual start function: build the server from flags,
// then serve it on stdio.
func (p *proc) buildAndServe(ctx context.Context) error {
	return p.serve(ctx, p.build(), p.in)
}

// exitError ends the process with a chosen status; msg, if any, goes to
// stderr first.
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string {
	if e.msg == "" {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.msg
}

type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func exitStatus(err error, errw io.Writer) int {
	if err == nil {
		return 0
	}
	var ee exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(errw, ee.msg)
		}
		return ee.code
	}
	fmt.Fprintf(errw, "testserver: %v\n", err)
	var ue usageError
	if errors.As(err, &ue) {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	return 1
}

// lockedWriter serializes writes, so that a fault server writing around the
// SDK (garbage on stdout, floods on stderr) never splits one of its lines.
type lockedWriter struct {
	mu   sync.Mutex
	w    io.Writer
	next func() // run after the next write completes, under the lock
}

func (w *lockedWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.w.Write(b)
	if f := w.next; f != nil {
		w.next = nil
		f()
	}
	return n, err
}

// afterNextWrite arranges for f to run once the next write that starts after
// this call has completed. Arming takes the lock, so a write already in
// progress (whose reader may have raced ahead of us) never counts.
func (w *lockedWriter) afterNextWrite(f func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.next = f
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func implementation(name string) *mcp.Implementation {
	return &mcp.Implementation{Name: "switchboard-testserver-" + name, Title: "Switchboard test server " + name, Version: "v1.0.0"}
}
