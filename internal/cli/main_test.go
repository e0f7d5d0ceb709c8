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
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/switchboard-mcp/switchboard/internal/npmtest"
	"github.com/switchboard-mcp/switchboard/internal/proc"
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
	testscript.Main(m, map[string]func(){
		"switchboard": func() { os.Exit(Main()) },
	})
}

// TestScripts runs the acceptance tests in testdata/script: each a user
// session driving the real command in a temp HOME and workspace.
//
// Besides the usual testscript commands, scripts have
//
//	exitcode N CMD [ARG...]
//
// which runs CMD and checks that it exits with status N, keeping its
// stdout and stderr for the stdout/stderr commands that follow.
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
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			privateWorld(env)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode":    cmdExitCode,
			"http401":     cmdHTTP401,
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
