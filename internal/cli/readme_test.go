package cli

import (
	"path/filepath"
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
