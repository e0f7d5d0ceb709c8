package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/switchboard-mcp/switchboard/internal/npmtest"
)

// TestReadmeScripts runs testdata/readme: the README's CLI examples as a
// newcomer types them, from a fresh HOME outside any repository, against
// the real npm reference servers. npx finds the pinned packages through
// $NODE_MODULES (the scripts link it into their home) and runs offline, so
// the scripts need Node but no network.
func TestReadmeScripts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts npm servers")
	}
	p := npmtest.Install(t)
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/readme",
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			privateWorld(env)
			env.Setenv("NODE_MODULES", filepath.Join(p.Dir, "node_modules"))
			env.Setenv("npm_config_offline", "true")
			env.Setenv("npm_config_update_notifier", "false")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode": cmdExitCode,
		},
	})
}

// TestReadmeFirstRun: the README's Go version is go.mod's, it warns that
// the first `go run` compiles for a few minutes, and its install command
// is one that works from a clone (issue 29, point 15).
func TestReadmeFirstRun(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\d+)\.(\d+)(\.\d+)?$`).FindSubmatch(gomod)
	if m == nil {
		t.Fatal("go.mod has no go directive")
	}
	full, minor := string(m[0][len("go "):]), string(m[1])+"."+string(m[2])
	for _, want := range []string{
		"With Go " + minor + " or later (`go.mod` says `go " + full + "`)",
		"The first `go run` takes a few minutes",
		"go install ./cmd/switchboard",
	} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("README.md does not say %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join("..", "..", "cmd", "switchboard", "main.go")); err != nil {
		t.Errorf("the install command's package: %v", err)
	}
}
