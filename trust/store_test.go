package trust

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/safefile/safefiletest"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func repoServer(name string, def config.Server) *config.ResolvedServer {
	return &config.ResolvedServer{Name: name, Written: def, Scope: config.ScopeProject, Trust: config.TrustRepo, File: "/ws/.mcp.json"}
}

func TestStoreApproveCheckRevoke(t *testing.T) {
	home := filepath.Join(t.TempDir(), "sb")
	ws := "/ws"
	rs := repoServer("fs", config.Server{Command: "npx", Args: []string{"-y", "fs"}, Env: map[string]string{"A": "1"}})
	s := Open(home)
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if v := s.Check(rs, ws); v.Status != NeedsApproval {
		t.Fatalf("before approval: %v", v.Status)
	}
	if _, err := s.Approve(ws, rs, t0); err != nil {
		t.Fatal(err)
	}
	// A fresh Open sees it: it was written to the file.
	s2 := Open(home)
	if v := s2.Check(rs, ws); v.Status != Approved {
		t.Fatalf("after approval: %v (%v)", v.Status, s2.Err())
	}
	// Per workspace: another checkout is not approved.
	if v := s2.Check(rs, "/other"); v.Status != NeedsApproval {
		t.Errorf("other workspace: %v", v.Status)
	}
	// Modes.
	if runtime.GOOS != "windows" {
		for p, want := range map[string]os.FileMode{home: 0o700, filepath.Join(home, FileName): 0o600} {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode().Perm(); got != want {
				t.Errorf("%s mode %04o, want %04o", p, got, want)
			}
		}
	}
	// Changes make it stale, naming the fields.
	for _, tc := range []struct {
		change func(*config.Server)
		want   []string
		desc   string
	}{
		{func(d *config.Server) { d.Command = "sh" }, []string{"command"}, "command"},
		{func(d *config.Server) { d.Args = []string{"-y", "fs@evil"} }, []string{"args"}, "args"},
		{func(d *config.Server) { d.Env = map[string]string{"A": "1", "NODE_OPTIONS": "--require /tmp/x.js"} }, []string{"env"}, "env (added NODE_OPTIONS)"},
		{func(d *config.Server) { d.Env = map[string]string{"A": "2"} }, []string{"env"}, "env (values changed)"},
		{func(d *config.Server) { d.Cwd = "/tmp"; d.EnvPassthrough = []string{"AWS_SECRET_ACCESS_KEY"} }, []string{"cwd", "env_passthrough"}, "cwd, env_passthrough"},
	} {
		def := rs.Written
		def.Env = map[string]string{"A": "1"}
		tc.change(&def)
		changed := repoServer("fs", def)
		v := s2.Check(changed, ws)
		if v.Status != Stale {
			t.Errorf("%s: status %v, want stale", tc.desc, v.Status)
			continue
		}
		if diff := cmp.Diff(tc.want, v.Changed); diff != "" {
			t.Errorf("changed (-want +got):\n%s", diff)
		}
		if got := v.Describe(changed.Written); got != tc.desc {
			t.Errorf("Describe = %q, want %q", got, tc.desc)
		}
		if r := v.Reason(changed); !strings.Contains(r, tc.desc) || strings.Contains(r, "switchboard") {
			t.Errorf("reason %q does not name the change, or names a CLI command (the CLI adds those)", r)
		}
	}
	// User scope is trusted whatever the store says.
	user := *rs
	user.Scope, user.Trust = config.ScopeUser, config.TrustUser
	if v := s2.Check(&user, ws); v.Status != Trusted {
		t.Errorf("user server: %v", v.Status)
	}
	// Revoke and reset.
	if found, err := s2.Revoke(ws, "fs"); err != nil || !found {
		t.Fatalf("revoke: %v %v", found, err)
	}
	if found, _ := s2.Revoke(ws, "fs"); found {
		t.Error("revoked twice")
	}
	if v := Open(home).Check(rs, ws); v.Status != NeedsApproval {
		t.Errorf("after revoke: %v", v.Status)
	}
	s2.Approve(ws, rs, t0)
	s2.Approve(ws, repoServer("git", config.Server{Command: "git-mcp"}), t0)
	s2.Approve("/other", rs, t0)
	names, err := s2.Reset(ws)
	if err != nil || !cmp.Equal(names, []string{"fs", "git"}) {
		t.Fatalf("reset: %v %v", names, err)
	}
	s3 := Open(home)
	if len(s3.Approved(ws)) != 0 || len(s3.Approved("/other")) != 1 {
		t.Errorf("reset touched the wrong workspace: %v %v", s3.Approved(ws), s3.Approved("/other"))
	}
}

// TestStoreKeepsConcurrentWrites: two Store values (two processes) each
// approve a server; neither loses the other's.
func TestStoreKeepsConcurrentWrites(t *testing.T) {
	home := t.TempDir()
	a, b := Open(home), Open(home)
	if _, err := a.Approve("/ws", repoServer("one", config.Server{Command: "1"}), t0); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Approve("/ws", repoServer("two", config.Server{Command: "2"}), t0); err != nil {
		t.Fatal(err)
	}
	if got := Open(home).Approved("/ws"); !cmp.Equal(got, []string{"one", "two"}) {
		t.Errorf("approved = %v", got)
	}
}

func TestStoreFailsClosed(t *testing.T) {
	rs := repoServer("fs", config.Server{Command: "x"})
	for _, tc := range []struct {
		name, content string
		mode          os.FileMode
		want          string
		// unix marks a check of Unix modes and owners: dirMode is the
		// mode the store's directory is given (0: as made), owner the uid
		// the file is given (0: as made).
		unix    bool
		dirMode os.FileMode
		owner   int
	}{
		{name: "garbage", content: "{not json", mode: 0o600, want: "is corrupt"},
		{name: "wrong shape", content: `{"version": 1, "workspaces": {"/ws": {"servers": {"fs": {"fingerprint": "md5:x"}}}}}`, mode: 0o600, want: "no valid fingerprint"},
		{name: "future version", content: `{"version": 9, "workspaces": {}}`, mode: 0o600, want: "version 9"},
		{name: "trailing data", content: `{"version": 1, "workspaces": {}} {}`, mode: 0o600, want: "unexpected data"},
		{name: "world writable", mode: 0o666, want: "can be written by other users", unix: true},
		// Whoever can write the directory can rename a file of their own
		// over trust.json; whoever owns the file could have written it.
		{name: "directory world writable", mode: 0o600, dirMode: 0o777, want: "which other users can write (mode 0777)", unix: true},
		{name: "directory group writable", mode: 0o600, dirMode: 0o770, want: "which other users can write (mode 0770)", unix: true},
		{name: "another user's", mode: 0o600, owner: 65534, want: "belongs to another user, uid 65534", unix: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.unix && runtime.GOOS == "windows" {
				t.Skip("no mode bits or owners on Windows")
			}
			if tc.owner != 0 && os.Getuid() != 0 {
				t.Skip("only root can give a file to another user")
			}
			home := t.TempDir()
			// Start from a valid approval, then damage the file.
			good := Open(home)
			if _, err := good.Approve("/ws", rs, t0); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(home, FileName)
			if tc.content != "" {
				if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Chmod(path, tc.mode); err != nil {
				t.Fatal(err)
			}
			if tc.owner != 0 {
				if err := os.Chown(path, tc.owner, tc.owner); err != nil {
					t.Fatal(err)
				}
			}
			if tc.dirMode != 0 {
				if err := os.Chmod(home, tc.dirMode); err != nil {
					t.Fatal(err)
				}
			}
			before, _ := os.ReadFile(path)
			s := Open(home)
			err := s.Err()
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "nothing is approved") {
				t.Fatalf("Err = %v, want it to say %q and that nothing is approved", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("Err is not one line: %q", err)
			}
			if v := s.Check(rs, "/ws"); v.Status != NeedsApproval {
				t.Errorf("a bad store approved: %v", v.Status)
			}
			if _, err := s.Approve("/ws", rs, t0); err == nil {
				t.Error("Approve wrote over a bad store")
			}
			if after, _ := os.ReadFile(path); string(after) != string(before) {
				t.Error("the bad file was changed: its content is lost")
			}
		})
	}
}

// A directory others can write fails closed before there is a file too
// (whoever creates trust.json there would own it), and is not written to;
// one with the sticky bit, as /tmp has, is fine: there others cannot
// remove or rename the user's files.
func TestStoreDirectoryOthersCanWrite(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no mode bits on Windows")
	}
	rs := repoServer("fs", config.Server{Command: "x"})
	home := t.TempDir()
	if err := os.Chmod(home, 0o777); err != nil {
		t.Fatal(err)
	}
	s := Open(home)
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "fix: chmod 700 "+home) {
		t.Errorf("Err = %v, want it to say chmod 700 %s", err, home)
	}
	if _, err := s.Approve("/ws", rs, t0); err == nil {
		t.Error("Approve wrote into the directory")
	}
	if _, err := os.Stat(filepath.Join(home, FileName)); err == nil {
		t.Error("the store's file was made")
	}
	if err := os.Chmod(home, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	s = Open(home)
	if _, err := s.Approve("/ws", rs, t0); err != nil {
		t.Fatalf("Approve in a sticky directory: %v", err)
	}
	if v := Open(home).Check(rs, "/ws"); v.Status != Approved {
		t.Errorf("in a sticky directory: %v", v.Status)
	}
}

func TestStoreDirectoryIsError(t *testing.T) {
	home := t.TempDir()
	if err := os.Mkdir(filepath.Join(home, FileName), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := Open(home).Err(); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("Err = %v", err)
	}
}

// Issue 28, point 7: trust.json that is a link to /dev/zero or a named
// pipe fails closed at once, saying what it is, and Approve does not write
// over it.
func TestStoreSpecialFileFailsClosed(t *testing.T) {
	rs := repoServer("fs", config.Server{Command: "x"})
	for _, tc := range []struct {
		name string
		make func(testing.TB, string)
		want string
	}{
		{"dev zero", safefiletest.DevZero, "cannot be read: it is a character device"},
		{"fifo", safefiletest.FIFO, "cannot be read: it is a named pipe (FIFO), not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			path := filepath.Join(home, FileName)
			tc.make(t, path)
			s := Open(home)
			if err := s.Err(); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "nothing is approved") {
				t.Fatalf("Err = %v, want it to say %q", err, tc.want)
			}
			if _, err := s.Approve("/ws", rs, t0); err == nil {
				t.Error("Approve wrote over the file")
			}
			if fi, err := os.Lstat(path); err != nil || fi.Mode().IsRegular() {
				t.Errorf("the file was replaced: %v, %v", fi, err)
			}
		})
	}
}

func TestPreApproval(t *testing.T) {
	a := repoServer("a", config.Server{Command: "a"})
	b := repoServer("b", config.Server{Command: "b"})
	user := &config.ResolvedServer{Name: "u", Trust: config.TrustUser, Scope: config.ScopeUser}
	none := NewPreApproval()
	if _, ok := none.Check(a); ok {
		t.Error("empty settings approved")
	}
	p := NewPreApproval(
		SettingsSource{"--settings", config.Settings{"enabledMcpjsonServers": []any{"a"}}},
		SettingsSource{"user", config.Settings{"disabledMcpjsonServers": []any{"b"}, "enableAllProjectMcpServers": true}},
	)
	if v, ok := p.Check(a); !ok || v.Status != PreApproved || v.Source != "--settings" {
		t.Errorf("a: %+v %v", v, ok)
	}
	if v, ok := p.Check(b); !ok || v.Status != Rejected || v.Source != "user" || v.Allowed() {
		t.Errorf("b: %+v %v", v, ok)
	}
	if v, ok := p.Check(repoServer("c", config.Server{Command: "c"})); !ok || v.Status != PreApproved || v.Source != "user" {
		t.Errorf("c (all): %+v %v", v, ok)
	}
	if _, ok := p.Check(user); ok {
		t.Error("settings ruled on a user server")
	}
	// Decide: settings first, then the store.
	s := Open(t.TempDir())
	if v := Decide(s, NewPreApproval(), a, "/ws"); v.Status != NeedsApproval {
		t.Errorf("Decide without settings: %v", v.Status)
	}
	if v := Decide(s, p, a, "/ws"); v.Status != PreApproved {
		t.Errorf("Decide with settings: %v", v.Status)
	}
}

func TestVerdictState(t *testing.T) {
	for st, want := range map[Status]string{Trusted: "", Approved: "", PreApproved: "", NeedsApproval: "needs-approval", Stale: "approval-stale", Rejected: "disabled"} {
		if got := (Verdict{Status: st}).State(); got != want {
			t.Errorf("%v.State() = %q, want %q", st, got, want)
		}
		if (Verdict{Status: st}.State() == "") != (Verdict{Status: st}).Allowed() {
			t.Errorf("%v: State and Allowed disagree", st)
		}
	}
}

// TestStoreSeesOtherProcesses: a long-lived Store (a gateway's) sees an
// approval, a revoke and damage made through another Store (another
// process) without being reopened.
func TestStoreSeesOtherProcesses(t *testing.T) {
	home := t.TempDir()
	rs := repoServer("fs", config.Server{Command: "x"})
	long, other := Open(home), Open(home)
	if v := long.Check(rs, "/ws"); v.Status != NeedsApproval {
		t.Fatalf("before: %v", v.Status)
	}
	if _, err := other.Approve("/ws", rs, t0); err != nil {
		t.Fatal(err)
	}
	if v := long.Check(rs, "/ws"); v.Status != Approved {
		t.Errorf("after another process approved: %v", v.Status)
	}
	if _, err := other.Revoke("/ws", "fs"); err != nil {
		t.Fatal(err)
	}
	if v := long.Check(rs, "/ws"); v.Status != NeedsApproval {
		t.Errorf("after another process revoked: %v", v.Status)
	}
	other.Approve("/ws", rs, t0)
	if err := os.WriteFile(filepath.Join(home, FileName), []byte("{broken"), 0o600); err != nil {
		t.Fatal(err)
	}
	if v := long.Check(rs, "/ws"); v.Status != NeedsApproval || long.Err() == nil {
		t.Errorf("after the file was damaged: %v, Err %v", v.Status, long.Err())
	}
	os.Remove(filepath.Join(home, FileName))
	if v := long.Check(rs, "/ws"); v.Status != NeedsApproval || long.Err() != nil {
		t.Errorf("after the file was removed: %v, Err %v", v.Status, long.Err())
	}
}
