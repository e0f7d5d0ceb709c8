package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/safefile/safefiletest"
)

// Issue 28, point 7: a configuration file that is a link to /dev/zero
// (read until memory ran out) or a named pipe (open(2) waited for a writer,
// every command hung). Each file a load reads, planted in turn: the load
// returns, with one error naming the file and saying what it is, and the
// servers of the other scopes are all there.
func TestLoadRefusesSpecialFiles(t *testing.T) {
	kinds := []struct {
		name   string
		make   func(testing.TB, string)
		reason string
	}{
		{"dev zero", safefiletest.DevZero, "it is a character device (such as /dev/zero or a terminal), not a regular file"},
		{"fifo", safefiletest.FIFO, "it is a named pipe (FIFO), not a regular file"},
	}
	files := []struct {
		name string
		path func(f *fixture) string
		want []row // the servers left once this file is refused
	}{
		{".mcp.json", func(f *fixture) string { return filepath.Join(f.proj, ".mcp.json") }, []row{
			{"u", ScopeUser, TrustUser, Available, "", nil, "user-cmd"},
		}},
		{"workspace.json", func(f *fixture) string { return WorkspaceFile(f.proj) }, []row{
			{"p", ScopeProject, TrustRepo, Available, "", nil, "repo-cmd"},
			{"u", ScopeUser, TrustUser, Available, "", nil, "user-cmd"},
		}},
		{"user mcp.json", func(f *fixture) string { return filepath.Join(f.home, "mcp.json") }, []row{
			{"p", ScopeProject, TrustRepo, Available, "", nil, "repo-cmd"},
		}},
		{"managed-mcp.json", func(f *fixture) string { return ManagedFile(f.etcDir) }, []row{
			{"p", ScopeProject, TrustRepo, Available, "", nil, "repo-cmd"},
			{"u", ScopeUser, TrustUser, Available, "", nil, "user-cmd"},
		}},
	}
	for _, k := range kinds {
		for _, file := range files {
			t.Run(k.name+"/"+file.name, func(t *testing.T) {
				f := newFixture(t)
				f.write(filepath.Join(f.home, "mcp.json"), servers(cmdDef("u", "user-cmd")))
				f.write(filepath.Join(f.proj, ".mcp.json"), servers(cmdDef("p", "repo-cmd")))
				p := file.path(f)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				os.Remove(p)
				k.make(t, p)
				r := f.load(f.opts())
				if diff := cmp.Diff(file.want, rows(r)); diff != "" {
					t.Errorf("servers (-want +got):\n%s", diff)
				}
				want := []string{p + ": cannot be read: " + k.reason +
					" (fix: replace it with a regular file (a link to a device such as /dev/zero, or a named pipe, is never read))"}
				if diff := cmp.Diff(want, errorsOf(r)); diff != "" {
					t.Errorf("errors (-want +got):\n%s", diff)
				}
			})
		}
	}
	// --mcp-config FILE, required: the same error, exit 2 for the CLI.
	for _, k := range kinds {
		t.Run(k.name+"/--mcp-config", func(t *testing.T) {
			f := newFixture(t)
			f.write(filepath.Join(f.home, "mcp.json"), servers(cmdDef("u", "user-cmd")))
			p := filepath.Join(f.dir, "extra.json")
			k.make(t, p)
			o := f.opts()
			o.MCPConfigs = []string{p}
			r := f.load(o)
			if diff := cmp.Diff([]row{{"u", ScopeUser, TrustUser, Available, "", nil, "user-cmd"}}, rows(r)); diff != "" {
				t.Errorf("servers (-want +got):\n%s", diff)
			}
			if errs := errorsOf(r); len(errs) != 1 || !strings.HasPrefix(errs[0], p+": cannot be read: "+k.reason) {
				t.Errorf("errors = %q", errs)
			}
		})
	}
}

// The same for every settings file: a layer with an error naming what the
// file is (policy and trust then fail closed, as for any unreadable
// settings file), and --settings FILE is an error.
func TestReadSettingsRefusesSpecialFiles(t *testing.T) {
	for _, k := range []struct {
		name   string
		make   func(testing.TB, string)
		reason string
	}{
		{"dev zero", safefiletest.DevZero, "character device"},
		{"fifo", safefiletest.FIFO, "named pipe (FIFO)"},
	} {
		t.Run(k.name, func(t *testing.T) {
			dir := t.TempDir()
			home, ws, managed := filepath.Join(dir, "sb"), filepath.Join(dir, "ws"), filepath.Join(dir, "etc")
			for _, d := range []string{home, filepath.Join(ws, ".switchboard"), managed} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for _, p := range []string{ManagedSettingsPath(managed), UserSettingsPath(home), ProjectSettingsPath(ws)} {
				k.make(t, p)
			}
			st := ReadSettings(SettingsPlaces{Home: home, Workspace: ws, ManagedDir: managed})
			var got []string
			for _, l := range st.Problems() {
				if !strings.Contains(l.Err.Error(), k.reason) {
					t.Errorf("%s: %v does not say it is a %s", l.Label(), l.Err, k.reason)
				}
				got = append(got, string(l.Scope)+" "+l.File)
			}
			want := []string{"managed " + ManagedSettingsPath(managed), "user " + UserSettingsPath(home), "project " + ProjectSettingsPath(ws)}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}

			flag := filepath.Join(dir, "flag.json")
			k.make(t, flag)
			if _, err := LoadSettings(flag); err == nil || !strings.Contains(err.Error(), "--settings "+flag+": cannot read the file: it is a "+k.reason) {
				t.Errorf("LoadSettings(%s) err = %v", flag, err)
			}
		})
	}
}

// An edit (mcp add) of a file that is not a regular file is refused with
// the same reason, and writes nothing over it.
func TestEditRefusesSpecialFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "mcp.json")
	safefiletest.FIFO(t, p)
	_, err := readConfigFile(p)
	if err == nil || !strings.Contains(err.Error(), "cannot be read: it is a named pipe (FIFO), not a regular file") {
		t.Fatalf("readConfigFile err = %v", err)
	}
}
