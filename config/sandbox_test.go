package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// protectedWords are the words for ProtectedNames below one writable path, before
// the runtime leaves out those that do not exist.
const protectedWords = " but not its .git, .mcp.json, mcp.json, .switchboard, .claude, .codex, .cursor and .vscode"

// A project-scope stdio server is sandboxed with no network unless its
// definition lists destinations; a list is what it may reach, and what
// the approval review, status, `mcp get` and doctor say in words.
func TestSandboxNetworkOfProjectServers(t *testing.T) {
	project := func(raw string) *ResolvedServer {
		t.Helper()
		s, diags := ParseServer("srv", []byte(raw))
		if len(diags) > 0 {
			t.Fatalf("%s: %v", raw, diags)
		}
		return &ResolvedServer{Name: "srv", Written: s, Effective: s, Scope: ScopeProject, Trust: TrustRepo}
	}
	for _, tt := range []struct {
		raw, words string
		allow      []string
	}{
		{`{"command": "srv"}`, "can read and write /ws" + protectedWords + " (and the system directories, read-only; the rest of your home is hidden; a private /tmp); no network", nil},
		{`{"command": "srv", "sandbox": {"network": ["registry.npmjs.org:443", "127.0.0.1:8080"]}}`,
			"can read and write /ws" + protectedWords + " (and the system directories, read-only; the rest of your home is hidden; a private /tmp); network only to registry.npmjs.org:443, 127.0.0.1:8080",
			[]string{"registry.npmjs.org:443", "127.0.0.1:8080"}},
		{`{"command": "srv", "sandbox": {"fs": {"read": ["docs"]}, "network": ["[::1]:9"]}}`,
			"can read /ws/docs (and the system directories, read-only; the rest of your home is hidden; a private /tmp); network only to [::1]:9",
			[]string{"[::1]:9"}},
		{`{"command": "srv", "sandbox": {"network": true}}`, "can read and write /ws" + protectedWords + " (and the system directories, read-only; the rest of your home is hidden; a private /tmp); full network", nil},
	} {
		p := EffectiveSandbox(project(tt.raw), "/ws", "/home/me", nil)
		if p == nil {
			t.Fatalf("%s: not sandboxed", tt.raw)
		}
		if diff := cmp.Diff(tt.allow, p.Allow); diff != "" {
			t.Errorf("%s: allow-list (-want +got):\n%s", tt.raw, diff)
		}
		if got := DescribeSandbox(p, nil); got != tt.words {
			t.Errorf("%s:\n got %q\nwant %q", tt.raw, got, tt.words)
		}
	}
	// Before Linux 6.12 the full network reaches the session's abstract
	// sockets too (X11's): the words say so.
	p := EffectiveSandbox(project(`{"command": "srv", "sandbox": {"network": true}}`), "/ws", "/home/me", nil)
	p.AbstractSockets = true
	if got, want := DescribeSandbox(p, nil), "; full network and your session's abstract sockets (your X server's: it can type into any window; Linux before 6.12)"; !strings.HasSuffix(got, want) {
		t.Errorf("with abstract sockets:\n got %q\nwant it to end %q", got, want)
	}
	if _, diags := ParseServer("srv", []byte(`{"command": "srv", "sandbox": {"network": ["::1:9"]}}`)); len(diags) == 0 {
		t.Errorf("an unbracketed IPv6 destination was accepted")
	}
}

// A repository's server may name only paths in its workspace (its cwd
// included): one outside is left out and keeps it from starting, saying
// which. A server the user wrote keeps the paths it names. The words
// never say both that the server can reach a directory holding the home
// and that the rest of the home is hidden.
func TestSandboxPathsOfProjectServers(t *testing.T) {
	parse := func(raw string, scope Scope) *ResolvedServer { return parseScoped(t, raw, scope) }
	for _, tt := range []struct {
		raw      string
		scope    Scope
		refused  []string
		read     []string
		write    []string
		words    string // a part of DescribeSandbox's words
		notWords string
	}{
		{raw: `{"command": "srv", "cwd": "../../../../.."}`, scope: ScopeProject,
			refused: []string{`"cwd" names "../../../../..", outside the workspace (a repository's server may name only paths in its workspace)`},
			write:   []string{"/home/me/ws"}, words: "WILL NOT START: \"cwd\" names", notWords: "can read and write /home/me/ws, /"},
		{raw: `{"command": "srv", "sandbox": {"fs": {"read": ["~/.ssh", "/etc/passwd", "docs"], "write": ["../other"]}}}`, scope: ScopeProject,
			refused: []string{
				`"sandbox.fs.read" names "~/.ssh", outside the workspace (a repository's server may name only paths in its workspace)`,
				`"sandbox.fs.read" names "/etc/passwd", outside the workspace (a repository's server may name only paths in its workspace)`,
				`"sandbox.fs.write" names "../other", outside the workspace (a repository's server may name only paths in its workspace)`},
			read: []string{"/home/me/ws/docs"}},
		{raw: `{"command": "srv", "cwd": "sub", "sandbox": {"fs": {"read": ["/home/me/ws/docs"]}}}`, scope: ScopeProject,
			read: []string{"/home/me/ws/docs", "/home/me/ws/sub"}},
		{raw: `{"command": "srv", "cwd": "/srv/x", "sandbox": {"fs": {"read": ["~/data", "/home"]}}}`, scope: ScopeUser,
			read: []string{"/home/me/data", "/home", "/srv/x"}, words: "your whole home directory is visible", notWords: "the rest of your home is hidden"},
	} {
		p := EffectiveSandbox(parse(tt.raw, tt.scope), "/home/me/ws", "/home/me", nil)
		if diff := cmp.Diff(tt.refused, p.Refused); diff != "" {
			t.Errorf("%s: refused (-want +got):\n%s", tt.raw, diff)
		}
		if diff := cmp.Diff(tt.read, p.Read); diff != "" {
			t.Errorf("%s: read (-want +got):\n%s", tt.raw, diff)
		}
		if diff := cmp.Diff(tt.write, p.Write); diff != "" {
			t.Errorf("%s: write (-want +got):\n%s", tt.raw, diff)
		}
		words := DescribeSandbox(p, nil)
		if !strings.Contains(words, tt.words) || tt.notWords != "" && strings.Contains(words, tt.notWords) {
			t.Errorf("%s: words %q (want %q, not %q)", tt.raw, words, tt.words, tt.notWords)
		}
	}
}

// What the runtime adds is said in words: links, command files, private
// caches, the registry.
func TestDescribeSandboxRuntimeParts(t *testing.T) {
	p := &SandboxPolicy{Write: []string{"/ws", "/ws/out"}, Home: "/home/me", Workspace: "/ws",
		Links:     map[string]string{"/ws/out": "/ws/build"},
		Files:     []string{"/opt/srv/server.js"},
		Unshown:   []string{"/home/me/.ssh/id_rsa"},
		Caches:    []SandboxCache{{Runner: "npm", Path: "/home/me/.npm", Private: "/home/me/.switchboard/sandbox/x/npm"}},
		Downloads: []SandboxDownload{{Runner: "npm", What: "the npm registry", URL: "https://registry.npmjs.org/", Dest: "registry.npmjs.org:443"}},
		Allow:     []string{"registry.npmjs.org:443"}}
	want := "can read and write /ws, /ws/out (a link to /ws/build) (and the system directories, read-only; the rest of your home is hidden; a private /tmp); " +
		"can read the files its command names: /opt/srv/server.js; " +
		"is not shown what its command names in a hidden folder of your home: /home/me/.ssh/id_rsa; sees npm's cache /home/me/.npm, writing only to a private copy; " +
		"may download packages from the npm registry (registry.npmjs.org:443); no other network"
	if got := DescribeSandbox(p, nil); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// The user's per-scope default may give project servers paths outside
// their workspace: those are the user's, not the repository's.
func TestSandboxDefaultPathsAreTheUsers(t *testing.T) {
	s, _ := ParseServer("srv", []byte(`{"command": "srv"}`))
	rs := &ResolvedServer{Name: "srv", Written: s, Effective: s, Scope: ScopeProject}
	defaults := SandboxDefaults{ScopeProject: {FS: &SandboxFS{Read: []string{"~/.cache/models"}, Write: []string{"."}}}}
	p := EffectiveSandbox(rs, "/home/me/ws", "/home/me", defaults)
	if len(p.Refused) != 0 || len(p.Read) != 1 || p.Read[0] != "/home/me/.cache/models" {
		t.Errorf("refused %v, read %v", p.Refused, p.Read)
	}
}

// Below each writable path, git's metadata and the agents' settings stay
// read-only (Protected), but for one the user named writable; a repository's
// server that names one writable, or a path inside one, does not start.
func TestSandboxKeepsGitAndSettings(t *testing.T) {
	parse := func(raw string, scope Scope) *ResolvedServer { return parseScoped(t, raw, scope) }
	// below lists the names kept below each dir: at the workspace root
	// (/ws), mcp.json too, the other name of the repository's servers
	// file; elsewhere it is a file like any other.
	below := func(dirs ...string) []string {
		var l []string
		for _, d := range dirs {
			names := ProtectedNames
			if d == "/ws" {
				names = []string{".git", ".mcp.json", "mcp.json", ".switchboard", ".claude", ".codex", ".cursor", ".vscode"}
			}
			for _, n := range names {
				l = append(l, d+"/"+n)
			}
		}
		return l
	}
	without := func(l []string, drop string) []string {
		var out []string
		for _, s := range l {
			if s != drop {
				out = append(out, s)
			}
		}
		return out
	}
	why := "git runs its hooks and config outside any sandbox"
	for _, tt := range []struct {
		raw      string
		scope    Scope
		defaults SandboxDefaults
		write    []string
		kept     []string
		refused  []string
	}{
		{raw: `{"command": "srv"}`, scope: ScopeProject, write: []string{"/ws"}, kept: below("/ws")},
		{raw: `{"command": "srv", "cwd": "sub"}`, scope: ScopeProject, write: []string{"/ws", "/ws/sub"}, kept: below("/ws", "/ws/sub")},
		{raw: `{"command": "srv", "cwd": ".git"}`, scope: ScopeProject, write: []string{"/ws"}, kept: below("/ws"),
			refused: []string{`"cwd" names ".git": a repository's server may not write .git (` + why + ")"}},
		{raw: `{"command": "srv", "sandbox": {"fs": {"write": [".", ".git/hooks", ".vscode"]}}}`, scope: ScopeProject, write: []string{"/ws"}, kept: below("/ws"),
			refused: []string{
				`"sandbox.fs.write" names ".git/hooks": a repository's server may not write .git (` + why + ")",
				`"sandbox.fs.write" names ".vscode": a repository's server may not write .vscode (an agent or editor runs commands from its settings)`}},
		{raw: `{"command": "srv", "sandbox": {"fs": {"write": [".", "mcp.json", "sub"]}}}`, scope: ScopeProject, write: []string{"/ws", "/ws/sub"},
			kept:    below("/ws", "/ws/sub"),
			refused: []string{`"sandbox.fs.write" names "mcp.json": a repository's server may not write mcp.json (it decides which servers run and how)`}},
		// The user's own server, and the user's default for the
		// repository's: what the user names writable is.
		{raw: `{"command": "srv", "sandbox": {"fs": {"write": [".", ".git"]}}}`, scope: ScopeLocal, write: []string{"/ws", "/ws/.git"},
			kept: append(without(below("/ws"), "/ws/.git"), below("/ws/.git")...)},
		{raw: `{"command": "srv"}`, scope: ScopeProject, defaults: SandboxDefaults{ScopeProject: {FS: &SandboxFS{Write: []string{".", ".git"}}}},
			write: []string{"/ws", "/ws/.git"}, kept: append(without(below("/ws"), "/ws/.git"), below("/ws/.git")...)},
	} {
		p := EffectiveSandbox(parse(tt.raw, tt.scope), "/ws", "/home/me", tt.defaults)
		if diff := cmp.Diff(tt.write, p.Write); diff != "" {
			t.Errorf("%s: write (-want +got):\n%s", tt.raw, diff)
		}
		if diff := cmp.Diff(tt.kept, p.Protected); diff != "" {
			t.Errorf("%s: kept (-want +got):\n%s", tt.raw, diff)
		}
		if diff := cmp.Diff(tt.refused, p.Refused); diff != "" {
			t.Errorf("%s: refused (-want +got):\n%s", tt.raw, diff)
		}
	}
	// In words: the kept names of one writable path, or each path.
	p := &SandboxPolicy{Write: []string{"/ws"}, Protected: []string{"/ws/.git", "/ws/.mcp.json"}}
	if got, want := DescribeSandbox(p, nil), "can read and write /ws but not its .git and .mcp.json"; !strings.HasPrefix(got, want) {
		t.Errorf("got %q, want it to start %q", got, want)
	}
	p = &SandboxPolicy{Write: []string{"/ws", "/data"}, Protected: []string{"/ws/.git"}}
	if got, want := DescribeSandbox(p, nil), "can read and write /ws, /data but not .git in /ws"; !strings.HasPrefix(got, want) {
		t.Errorf("got %q, want it to start %q", got, want)
	}
}

// A server whose cwd is inside its writable workspace keeps the cwd as a
// writable path of its own, with the protected names below it, but the
// words do not say it again (newcomer walkthrough: "can read and write
// /ws, /ws/docs"). A nested path that is a link, or that the user named
// inside a protected name, is still said.
func TestDescribeSandboxNestedWritable(t *testing.T) {
	for _, tt := range []struct {
		raw   string
		scope Scope
		write []string
		words string // the words' start
	}{
		{raw: `{"command": "srv", "cwd": "./docs"}`, scope: ScopeProject, write: []string{"/ws", "/ws/docs"},
			words: "can read and write /ws but not .git, .mcp.json, mcp.json, .switchboard, .claude, .codex, .cursor and .vscode in /ws, " +
				".git, .mcp.json, .switchboard, .claude, .codex, .cursor and .vscode in /ws/docs (and the system"},
		{raw: `{"command": "srv", "sandbox": {"fs": {"write": [".", "out"]}}}`, scope: ScopeUser, write: []string{"/ws", "/ws/out"},
			words: "can read and write /ws but not"},
		{raw: `{"command": "srv", "sandbox": {"fs": {"write": [".", ".git/hooks"]}}}`, scope: ScopeUser, write: []string{"/ws", "/ws/.git/hooks"},
			words: "can read and write /ws, /ws/.git/hooks but not"},
		{raw: `{"command": "srv", "cwd": "/data/sub", "sandbox": {"fs": {"write": ["/data"]}}}`, scope: ScopeUser, write: []string{"/data"},
			words: "can read and write /data but not its .git"},
	} {
		p := EffectiveSandbox(parseScoped(t, tt.raw, tt.scope), "/ws", "/home/me", nil)
		if diff := cmp.Diff(tt.write, p.Write); diff != "" {
			t.Errorf("%s: write (-want +got):\n%s", tt.raw, diff)
		}
		if got := DescribeSandbox(p, nil); !strings.HasPrefix(got, tt.words) {
			t.Errorf("%s:\n got %q\nwant it to start %q", tt.raw, got, tt.words)
		}
	}
	// The enforcement is unchanged: .git below the cwd stays read-only.
	p := EffectiveSandbox(parseScoped(t, `{"command": "srv", "cwd": "docs"}`, ScopeProject), "/ws", "/home/me", nil)
	if p.ProtectedBy("/ws/docs/.git/hooks/pre-commit") == "" {
		t.Errorf("docs/.git is not protected: %v", p.Protected)
	}
	// As the runtime leaves it (the names that exist), and with a link.
	p = &SandboxPolicy{Write: []string{"/ws", "/ws/docs"}, Protected: []string{"/ws/.git"}}
	if got, want := DescribeSandbox(p, nil), "can read and write /ws but not its .git (and"; !strings.HasPrefix(got, want) {
		t.Errorf("got %q, want it to start %q", got, want)
	}
	p = &SandboxPolicy{Write: []string{"/ws", "/ws/docs"}, Protected: []string{"/ws/.git"}, Links: map[string]string{"/ws/docs": "/ws/site"}}
	if got, want := DescribeSandbox(p, nil), "can read and write /ws, /ws/docs (a link to /ws/site) but not .git in /ws"; !strings.HasPrefix(got, want) {
		t.Errorf("got %q, want it to start %q", got, want)
	}
}

// parseScoped is the server "srv" of raw, defined in scope.
func parseScoped(t *testing.T, raw string, scope Scope) *ResolvedServer {
	t.Helper()
	s, diags := ParseServer("srv", []byte(raw))
	if len(diags) > 0 {
		t.Fatalf("%s: %v", raw, diags)
	}
	return &ResolvedServer{Name: "srv", Written: s, Effective: s, Scope: scope}
}
