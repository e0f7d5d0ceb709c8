package cli

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/switchboard-mcp/switchboard/internal/keyringtest"
	"github.com/switchboard-mcp/switchboard/internal/npmtest"
	"github.com/switchboard-mcp/switchboard/internal/proc"
	"github.com/switchboard-mcp/switchboard/internal/safefile/safefiletest"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// update rewrites golden files (testdata/*.golden) and the expected files
// inside testdata/script/*.txtar instead of comparing with them:
//
//	go test ./internal/cli -update
var update = flag.Bool("update", false, "rewrite golden files and script expectations")

// TestMain lets this test binary act as the switchboard command in the
// acceptance scripts (testscript puts it on their PATH), as a server
// supervisor and as the demo's server, as cmd/switchboard's main does, and
// besides as a test server for the runtime tests (the fork-exec trick;
// testserver.MaybeRun serves the demo too). The real binary holds no test
// servers, so a script that configures `switchboard __switchboard-testserver
// NAME` runs this test binary, never a built switchboard.
func TestMain(m *testing.M) {
	proc.MaybeRunSupervisor()
	testserver.MaybeRun()
	testscript.Main(cleanupM{m}, map[string]func(){
		"switchboard": func() { os.Exit(Main()) },
	})
}

// cleanupM removes what the tests built for all of them (examples/gateway)
// once they ran: testscript.Main exits right after.
type cleanupM struct{ m *testing.M }

func (c cleanupM) Run() int {
	defer removeExampleGateway()
	waitInParallel()
	return c.m.Run()
}

// testParallel is how many parallel tests run at once unless -parallel
// says otherwise. The tests that call t.Parallel here wait, mostly: on
// an npx download, a server's start delay, a client's own timers, a
// gateway's grace periods. go test's default, GOMAXPROCS, ran them two at
// a time on a 2-core machine, which made this package the slowest of
// `go test ./...` (~175 of its ~370 s were that queue).
const testParallel = 4

// waitInParallel raises -test.parallel to testParallel when the command
// line did not set it and GOMAXPROCS is lower.
func waitInParallel() {
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set && runtime.GOMAXPROCS(0) < testParallel {
		flag.Set("test.parallel", strconv.Itoa(testParallel))
	}
}

// TestScripts runs the acceptance tests in testdata/script: each a user
// session driving the real command in a temp HOME and workspace.
//
// Besides the usual testscript commands, scripts have
//
//	exitcode N CMD [ARG...]
//
// which runs CMD and checks that it exits with status N, keeping its
// stdout and stderr for the stdout/stderr commands that follow, and
//
//	need PROGRAM...
//
// which skips the script when a program is missing (fails under CI=true),
// and
//
//	age DURATION PATH...
//
// which makes files and folders look DURATION old, and
//
//	npmservers
//
// which installs the npm reference servers and sets $NODE and
// $EVERYTHING.
// privateWorld points a script's home, Switchboard folder, managed folder
// and XDG config into its work directory: nothing may leak in from the
// real home or /etc. Scripts can override these, but start from a
// private, empty world.
func privateWorld(env *testscript.Env) {
	home := filepath.Join(env.WorkDir, "home")
	env.Setenv("HOME", home)
	env.Setenv("USERPROFILE", home)
	env.Setenv("SWITCHBOARD_HOME", filepath.Join(home, ".switchboard"))
	env.Setenv("SWITCHBOARD_MANAGED_DIR", filepath.Join(env.WorkDir, "managed"))
	env.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	// No session bus of the machine's (a desktop's keyring): secrets and
	// OAuth tokens stay in the script's world unless it starts a keyring.
	env.Setenv("XDG_RUNTIME_DIR", filepath.Join(env.WorkDir, "run"))
	env.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	env.Setenv("CLAUDE_CONFIG_DIR", "")
	// Gemini CLI's administrator files (/etc/gemini-cli), which mcp import
	// and the "no servers" hints read: never this machine's.
	env.Setenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH", filepath.Join(env.WorkDir, "gemini-system", "settings.json"))
	env.Setenv("GEMINI_CLI_SYSTEM_DEFAULTS_PATH", filepath.Join(env.WorkDir, "gemini-system", "system-defaults.json"))
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			privateWorld(env)
			env.Values[scriptT{}] = env.T()
			env.Setenv("NPM_CACHE", npmCache())
			// The switchboard command's absolute path, for what must name
			// a program so (a call hook's command).
			if bin, err := exec.LookPath("switchboard"); err == nil {
				env.Setenv("SWITCHBOARD_BIN", bin)
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode":    cmdExitCode,
			"http401":     cmdHTTP401,
			"need":        cmdNeed,
			"age":         cmdAge,
			"mkfifo":      cmdMkfifo,
			"registry":    cmdRegistry,
			"npmservers":  cmdNPMServers,
			"keyring":     cmdKeyring,
			"httpecho":    cmdHTTPEcho,
			"npmregistry": cmdNpmRegistry,
		},
		Condition: scriptCondition,
	})
}

// scriptCondition answers [sandbox]: this machine can sandbox a server.
// Under CI=true it must: a missing mechanism fails the script instead.
func scriptCondition(cond string) (bool, error) {
	if cond != "sandbox" {
		return false, fmt.Errorf("unknown condition %q", cond)
	}
	why := proc.SandboxSupport()
	if why != "" && os.Getenv("CI") == "true" {
		return false, fmt.Errorf("the sandbox is not available on this CI machine: %s", why)
	}
	return why == "", nil
}

// cmdNpmRegistry is `npmregistry VAR`: it starts a local npm registry on
// loopback for the rest of the script (npmtest.RunRegistry: verdaccio,
// with the packages of testdata/npm-registry/packages and no uplink), and
// sets VAR to its URL.
func cmdNpmRegistry(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: npmregistry VAR")
	}
	r, err := npmtest.RunRegistry(ts.Logf)
	if err != nil {
		ts.Fatalf("npmregistry: %v", err)
	}
	ts.Defer(r.Stop)
	ts.Setenv(args[0], r.URL)
}

func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N CMD [ARG...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: bad status %q", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("exitcode: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}

// cmdNeed is `need PROGRAM...`: it skips the rest of the script when a
// program it runs is not on PATH, except under CI=true, where a missing
// dependency is a failure (.ci/run must install it).
func cmdNeed(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: need PROGRAM...")
	}
	for _, prog := range args {
		if _, err := exec.LookPath(prog); err != nil {
			if os.Getenv("CI") == "true" {
				ts.Fatalf("%s is not installed (CI=true: this script must run)", prog)
			}
			ts.Logf("%s is not installed: skipping the rest of the script", prog)
			ts.Value(scriptT{}).(testscript.T).Skip(prog + " is not installed")
		}
	}
}

// cmdNPMServers is `npmservers`: it installs the pinned npm reference
// servers (internal/npmtest, once per machine) and sets $NODE and
// $EVERYTHING (server-everything's entry script), or skips the rest of
// the script without node or npm (fails under CI=true).
func cmdNPMServers(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: npmservers")
	}
	p, err := npmtest.Ensure(ts.Logf)
	if err != nil {
		if os.Getenv("CI") == "true" {
			ts.Fatalf("npm servers: %v (CI=true: this script must run)", err)
		}
		ts.Logf("npm servers: %v: skipping the rest of the script", err)
		ts.Value(scriptT{}).(testscript.T).Skip("npm servers: " + err.Error())
	}
	ts.Setenv("NODE", p.Node)
	ts.Setenv("EVERYTHING", p.Everything)
}

// cmdAge is `age DURATION PATH...`: it sets the modification time of each
// path to DURATION ago (e.g. 192h), without sleeping.
func cmdAge(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: age DURATION PATH...")
	}
	d, err := time.ParseDuration(args[0])
	if err != nil {
		ts.Fatalf("age: %v", err)
	}
	at := time.Now().Add(-d)
	for _, p := range args[1:] {
		ts.Check(os.Chtimes(ts.MkAbs(p), at, at))
	}
}

// cmdKeyring is `keyring start|lock|unlock|stop`: start runs a real
// Secret Service (gnome-keyring-daemon on a private D-Bus session bus,
// internal/keyringtest) for the rest of the script and points the
// script's DBUS_SESSION_BUS_ADDRESS at it (skipping the script when the
// programs are missing, failing under CI=true); lock and unlock lock and
// unlock its login keyring; stop stops it.
func cmdKeyring(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: keyring start|lock|unlock|stop")
	}
	var k *keyringtest.Keyring
	if v, ok := keyrings.Load(ts); ok {
		k = v.(*keyringtest.Keyring)
	}
	if args[0] != "start" && k == nil {
		ts.Fatalf("keyring %s: no keyring started", args[0])
	}
	switch args[0] {
	case "start":
		cmdNeed(ts, false, keyringtest.Programs)
		dir, err := os.MkdirTemp(ts.Getenv("WORK"), "keyring")
		ts.Check(err)
		k, err := keyringtest.StartIn(dir)
		ts.Check(err)
		ts.Defer(k.Stop)
		keyrings.Store(ts, k)
		ts.Defer(func() { keyrings.Delete(ts) })
		ts.Setenv("DBUS_SESSION_BUS_ADDRESS", k.Addr)
	case "lock":
		ts.Check(k.Lock())
	case "unlock":
		ts.Check(k.Unlock())
	case "stop":
		k.Stop()
	default:
		ts.Fatalf("usage: keyring start|lock|unlock|stop")
	}
}

// cmdHTTPEcho is `httpecho VAR HEADER FILE`: it starts a loopback HTTP
// server, for the rest of the script, serving the echo test server over
// Streamable HTTP at /mcp to requests whose HEADER is exactly the contents
// of FILE (read at each request, trailing newline dropped; 401 otherwise),
// and sets VAR to its URL. A call that succeeds proves the header's value
// without any output showing it.
func cmdHTTPEcho(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: httpecho VAR HEADER FILE")
	}
	header, file := args[1], ts.MkAbs(args[2])
	srv := testserver.NewServer("echo")
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		want, err := os.ReadFile(file)
		if err != nil || r.Header.Get(header) != strings.TrimRight(string(want), "\r\n") {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	ts.Defer(hs.Close)
	ts.Setenv(args[0], hs.URL+"/mcp")
}

// keyrings holds each script's keyring (testscript values are set only
// at setup).
var keyrings sync.Map // *testscript.TestScript → *keyringtest.Keyring

// scriptT is the key of the script's testscript.T in Env.Values (for need).
type scriptT struct{}

// cmdHTTP401 is `http401 VAR [CHALLENGE]`: it starts a loopback HTTP
// server, for the rest of the script, that answers every request 401 —
// with CHALLENGE as its WWW-Authenticate header when given — and publishes
// no OAuth metadata (the well-known URLs are 401 too), and sets VAR to its
// /mcp URL.
func cmdHTTP401(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: http401 VAR [CHALLENGE]")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(args) == 2 {
			w.Header().Set("WWW-Authenticate", args[1])
		}
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	ts.Defer(srv.Close)
	ts.Setenv(args[0], srv.URL+"/mcp")
}

// npmCache is the npm cache of the user running the tests, which a script
// may name (env npm_config_cache=$NPM_CACHE) so that its npx servers come
// from packages fetched before instead of from the registry every run: a
// cache holds no configuration, so the script's private world stays so.
func npmCache() string {
	if c := os.Getenv("npm_config_cache"); c != "" {
		return c
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".npm")
	}
	return ""
}

// cmdMkfifo is `mkfifo PATH`: it makes a named pipe at PATH, and for the
// rest of the script opens it for writing now and then, so that a command
// stuck in open(2) on it (the bug of issue 28, point 7) reads an empty
// file and fails the script's checks instead of hanging it.
func cmdMkfifo(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: mkfifo PATH")
	}
	p := ts.MkAbs(args[0])
	if err := safefiletest.Mkfifo(p); err != nil {
		ts.Fatalf("mkfifo: %v", err)
	}
	ts.Defer(safefiletest.Release(p))
}

// cmdRegistry is `registry NPMRC LOG`: it starts a loopback HTTP server,
// for the rest of the script, that answers every request 404 and appends
// its method and path to LOG, and writes an .npmrc at NPMRC that names it
// as the registry: a repository's way to make npm fetch its code.
func cmdRegistry(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: registry NPMRC LOG")
	}
	log := ts.MkAbs(args[1])
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintln(f, r.Method, r.URL.Path)
			f.Close()
		}
		http.NotFound(w, r)
	}))
	ts.Defer(srv.Close)
	if err := os.WriteFile(ts.MkAbs(args[0]), []byte("registry="+srv.URL+"/\n"), 0o644); err != nil {
		ts.Fatalf("registry: %v", err)
	}
}

// golden compares got with testdata/<name>.golden, or rewrites the file
// with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (-want +got; run go test -update if the change is right):\n%s", path, cmp.Diff(string(want), got))
	}
}
