package trust

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/config"
)

// TestHostileCorpusVerdicts decides every case of testdata/hostile from
// configuration alone (internal/cli's TestHostileRepos drives the real
// CLI on the same corpus and watches for the marker file). Repository
// files are never settings sources, so only --settings from want.json is.
func TestHostileCorpusVerdicts(t *testing.T) {
	entries, err := os.ReadDir("testdata/hostile")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Run(e.Name(), func(t *testing.T) {
			dir := filepath.Join("testdata", "hostile", e.Name())
			var want struct {
				Server, State, Settings, Scope string
				Changed                        []string
				ApproveElsewhere, Approve      bool
			}
			b, err := os.ReadFile(filepath.Join(dir, "want.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			work := t.TempDir()
			home, ws := filepath.Join(work, "sb"), filepath.Join(work, "ws")
			copyCase(t, dir, ws, home)
			load := func(mcp string) *config.ResolvedServer {
				if err := os.WriteFile(filepath.Join(ws, ".mcp.json"), []byte(mcp), 0o644); err != nil {
					t.Fatal(err)
				}
				cfg, err := config.Load(&config.LoadOptions{Home: home, HomeDir: work, Workspace: ws, ManagedDir: filepath.Join(work, "managed"),
					LookupEnv: func(k string) (string, bool) { return "/x/" + k, k == "MARKER" || k == "EXE" }})
				if err != nil {
					t.Fatal(err)
				}
				rs := cfg.Server(want.Server)
				if rs == nil {
					t.Fatalf("no server %q", want.Server)
				}
				return rs
			}
			store := Open(home)
			if a, err := os.ReadFile(filepath.Join(dir, "approved.mcp.json")); err == nil {
				if _, err := store.Approve(ws, load(string(a)), time.Unix(0, 0)); err != nil {
					t.Fatal(err)
				}
			}
			cur, _ := os.ReadFile(filepath.Join(dir, ".mcp.json"))
			rs := load(string(cur))
			// Cases held by configuration itself (an invalid definition, a
			// server the user switched off) are decided before trust is.
			switch want.State {
			case "error":
				if rs.Availability != config.Invalid {
					t.Errorf("availability %v, want invalid", rs.Availability)
				}
				return
			case "disabled":
				if rs.Availability != config.Disabled {
					t.Errorf("availability %v (%s), want disabled", rs.Availability, rs.DisabledReason)
				}
				if want.Scope != "" && string(rs.Scope) != want.Scope {
					t.Errorf("scope %s, want %s", rs.Scope, want.Scope)
				}
				return
			}
			if want.ApproveElsewhere {
				store.Approve(filepath.Join(work, "elsewhere"), rs, time.Unix(0, 0))
			}
			var pre PreApproval
			if want.Settings != "" {
				s, err := config.LoadSettings(want.Settings)
				if err != nil {
					t.Fatal(err)
				}
				pre = NewPreApproval(SettingsSource{"--settings", s})
			}
			v := Decide(store, pre, rs, ws)
			if v.Status.String() != want.State || v.Allowed() {
				t.Errorf("verdict %v (allowed %v), want %s", v.Status, v.Allowed(), want.State)
			}
			if len(want.Changed) > 0 {
				if diff := cmp.Diff(want.Changed, v.Changed); diff != "" {
					t.Errorf("changed (-want +got):\n%s", diff)
				}
			}
			if rs.Trust != config.TrustRepo {
				t.Errorf("%s has trust %s", rs.Name, rs.Trust)
			}
		})
	}
}

// copyCase copies a case's repository files to ws (the marker and program
// placeholders need not be real: nothing runs here) and its user servers
// to home.
func copyCase(t *testing.T, dir, ws, home string) {
	t.Helper()
	for _, d := range []string{filepath.Join(ws, ".git"), home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		dst := filepath.Join(ws, rel)
		switch {
		case rel == "want.json" || rel == "approved.mcp.json" || rel == ".mcp.json":
			return nil
		case rel == "user-mcp.json":
			dst = filepath.Join(home, "mcp.json")
		case strings.HasPrefix(rel, ".."):
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
