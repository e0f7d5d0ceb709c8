package config

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// editChildEnv makes the test binary a child process that adds servers to
// a file (see TestMain): its value is "<file>|<name>,<name>,…".
const editChildEnv = "SWITCHBOARD_TEST_CONFIG_EDIT_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(editChildEnv); spec != "" {
		path, names, _ := strings.Cut(spec, "|")
		for _, name := range strings.Split(names, ",") {
			if err := SetServer(path, []string{"mcpServers"}, name, json.RawMessage(`{"command": "true"}`)); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Servers added at once to one hand-written file, by goroutines and by
// other processes (parallel setup scripts), are all there afterwards, and
// the user's comments and layout are intact: removing them again gives
// back the file byte for byte.
func TestSetServerConcurrentProcessesAndGoroutines(t *testing.T) {
	path := writeTemp(t, "mcp.json", userFile, 0o600)
	const procs, goroutines, each = 3, 6, 3
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		errs  []error
		added []string
	)
	fail := func(err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() }
	for p := range procs {
		var names []string
		for i := range each {
			names = append(names, fmt.Sprintf("proc%d-%d", p, i))
		}
		added = append(added, names...)
		wg.Go(func() {
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), editChildEnv+"="+path+"|"+strings.Join(names, ","))
			if out, err := cmd.CombinedOutput(); err != nil {
				fail(fmt.Errorf("child adding %v: %v: %s", names, err, out))
			}
		})
	}
	for g := range goroutines {
		for i := range each {
			name := fmt.Sprintf("go%d-%d", g, i)
			added = append(added, name)
			wg.Go(func() {
				if err := SetServer(path, []string{"mcpServers"}, name, json.RawMessage(`{"command": "true"}`)); err != nil {
					fail(err)
				}
			})
		}
	}
	wg.Wait()
	for _, err := range errs {
		t.Error(err)
	}

	var missing []string
	for _, name := range append(slices.Clone(added), "time", "github") {
		if ok, err := HasServer(path, []string{"mcpServers"}, name); err != nil {
			t.Fatal(err)
		} else if !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("%d of %d servers lost by concurrent edits: %v\nfile:\n%s", len(missing), len(added)+2, missing, readString(t, path))
	}
	for _, name := range added {
		if _, err := RemoveServer(path, []string{"mcpServers"}, name); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(userFile, readString(t, path)); diff != "" {
		t.Errorf("after removing the added servers, the file is not the user's (-want +got):\n%s", diff)
	}
	if _, err := os.Lstat(path + ".lock"); err == nil {
		t.Errorf("%s.lock is left behind", path)
	}
}

// Names enabled at once for one workspace are all enabled.
func TestSetWorkspaceEnablementConcurrent(t *testing.T) {
	root := t.TempDir()
	var (
		wg   sync.WaitGroup
		want []string
	)
	for i := range 12 {
		name := fmt.Sprintf("s%02d", i)
		want = append(want, name)
		wg.Go(func() {
			if err := SetWorkspaceEnablement(root, name, true); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	var ws struct{ EnabledMcpServers []string }
	if err := json.Unmarshal(standardize(t, readString(t, filepath.Join(root, ".switchboard", "workspace.json"))), &ws); err != nil {
		t.Fatal(err)
	}
	slices.Sort(ws.EnabledMcpServers)
	if diff := cmp.Diff(want, ws.EnabledMcpServers); diff != "" {
		t.Errorf("enabledMcpServers (-want +got):\n%s", diff)
	}
}
