package host_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
)

// A reload that removes a server, or changes it, while a call to it runs
// ends that call with an error at once (it does not wait for the tool),
// stops and reaps the old process, and runs the call nowhere else: the
// tool's side effect is recorded once, on the old process only.
func TestApplyEndsCallsOfServersItStops(t *testing.T) {
	linuxOnly(t)
	dir := t.TempDir()
	effects := map[string]string{"gone": filepath.Join(dir, "gone"), "change": filepath.Join(dir, "change")}
	def := func(name string, more ...string) config.ResolvedServer {
		return stdio(name, "echo", append([]string{"-side-effect-file", effects[name], "-side-effect-hold", "10m"}, more...)...)
	}
	h := newHost(t, cfgOf(def("gone"), def("change")), nil)
	pids := map[string]int{"gone": pidOf(t, h, "gone"), "change": pidOf(t, h, "change")}
	ended := map[string]chan error{}
	for name := range effects {
		ended[name] = make(chan error, 1)
		go func() {
			_, err := h.Call(ctxFor(t, 5*time.Minute), "mcp__"+name+"__side_effect", map[string]any{"note": name})
			ended[name] <- err
		}()
	}
	runs := func(name string) int {
		b, _ := os.ReadFile(effects[name])
		return bytes.Count(b, []byte("\n"))
	}
	for name := range effects {
		for deadline := time.Now().Add(30 * time.Second); runs(name) == 0; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the call never ran", name)
			}
		}
	}

	res := h.Apply(cfgOf(def("change", "-instructions", "now different")))
	if len(res.Removed) != 1 || len(res.Restarted) != 1 {
		t.Errorf("Apply: %+v, want gone removed and change restarted", res)
	}
	for name, ch := range ended {
		select {
		case err := <-ch:
			if err == nil {
				t.Errorf("%s: the call cut by the reload returned no error", name)
			}
		case <-time.After(time.Minute): // a guard against a hang, not a timing check
			t.Fatalf("%s: the call still waits for a process the reload stopped", name)
		}
		if alive(pids[name]) {
			t.Errorf("%s: old process %d survives the reload", name, pids[name])
		}
		if n := runs(name); n != 1 {
			t.Errorf("%s: the call ran %d times, want once", name, n)
		}
	}
	if got := pidOf(t, h, "change"); got == pids["change"] {
		t.Errorf("change kept its old process %d", got)
	}
	if runs("change") != 1 {
		t.Error("the new change process ran the cut call again")
	}
}
