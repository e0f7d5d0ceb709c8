package host

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/config"
)

func project(def config.Server) *config.ResolvedServer {
	def.Type = config.TypeStdio
	return &config.ResolvedServer{Name: "srv", Written: def, Effective: def, Scope: config.ScopeProject, Trust: config.TrustRepo}
}

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// A package runner's sandbox gets the registry and cache the user
// configured (their npmrc, their environment), never the repository's
// .npmrc: the registry is allowed and named in words, the cache is a
// private copy under the Switchboard home, and the server's environment
// pins both.
func TestSandboxOfPackageRunners(t *testing.T) {
	home := t.TempDir()
	ws := filepath.Join(home, "proj")
	os.MkdirAll(ws, 0o755)
	os.WriteFile(filepath.Join(ws, ".npmrc"), []byte("registry=https://evil.example/\n"), 0o644)
	os.WriteFile(filepath.Join(home, ".npmrc"), []byte("registry=http://127.0.0.1:4873/\n@corp:registry=https://npm.corp.example/\n//127.0.0.1:4873/:_authToken=secret\n"), 0o600)
	env := map[string]string{"npm_config_userconfig": filepath.Join(home, ".npmrc"), "npm_config_globalconfig": "/nonexistent"}

	p := sandboxOf(project(config.Server{Command: "npx", Args: []string{"-y", "some-server"}}), ws, home, nil, envOf(env))
	if diff := cmp.Diff([]string{"127.0.0.1:4873", "npm.corp.example:443"}, p.Allow); diff != "" {
		t.Errorf("allow (-want +got):\n%s", diff)
	}
	wantCache := config.SandboxCache{Runner: "npm", Path: filepath.Join(home, ".npm"),
		Private: filepath.Join(home, ".switchboard", "sandbox", workspaceKey(ws), "repo", "npm")}
	if diff := cmp.Diff([]config.SandboxCache{wantCache}, p.Caches); diff != "" {
		t.Errorf("caches (-want +got):\n%s", diff)
	}
	// A server of the user's own, sandboxed by choice, has copies of its
	// own: never the repository's, nor the folder both once shared.
	mine := project(config.Server{Command: "npx", Args: []string{"-y", "some-server"}, Sandbox: &config.Sandbox{}})
	mine.Scope, mine.Trust = config.ScopeUser, config.TrustUser
	if pm := sandboxOf(mine, ws, home, nil, envOf(env)); len(pm.Caches) != 1 ||
		pm.Caches[0].Private != filepath.Join(home, ".switchboard", "sandbox", workspaceKey(ws), "user", "npm") {
		t.Errorf("the user's own server's caches: %+v", pm.Caches)
	}
	if p.Env["npm_config_registry"] != "http://127.0.0.1:4873/" || p.Env["npm_config_cache"] != wantCache.Path || p.Env["npm_config_fetch_retries"] != "1" {
		t.Errorf("env %v", p.Env)
	}
	words := config.DescribeSandbox(p, nil)
	for _, w := range []string{"may download packages from your npm registry (127.0.0.1:4873)", "your @corp registry (npm.corp.example:443)",
		"sees npm's cache " + wantCache.Path + ", writing only to a private copy", "no other network"} {
		if !strings.Contains(words, w) {
			t.Errorf("words %q lack %q", words, w)
		}
	}
	if strings.Contains(words, "evil") || strings.Contains(words, "secret") {
		t.Errorf("words %q", words)
	}

	// The environment wins over the file; without either, the npm registry.
	env["npm_config_registry"] = "https://registry.corp.example/npm/"
	p = sandboxOf(project(config.Server{Command: "npx", Args: []string{"-y", "x"}}), ws, home, nil, envOf(env))
	if p.Env["npm_config_registry"] != "https://registry.corp.example/npm/" || !slices.Contains(p.Allow, "registry.corp.example:443") {
		t.Errorf("env %v allow %v", p.Env, p.Allow)
	}
	p = sandboxOf(project(config.Server{Command: "npx", Args: []string{"-y", "x"}}), ws, home, nil, envOf(map[string]string{"npm_config_userconfig": "/nonexistent", "npm_config_globalconfig": "/nonexistent"}))
	if !slices.Contains(p.Allow, "registry.npmjs.org:443") || !strings.Contains(config.DescribeSandbox(p, nil), "may download packages from the npm registry (registry.npmjs.org:443)") {
		t.Errorf("default: allow %v, words %q", p.Allow, config.DescribeSandbox(p, nil))
	}

	// uvx: PyPI (and its file host) by default, its caches private.
	p = sandboxOf(project(config.Server{Command: "uvx", Args: []string{"mcp-server-time"}}), ws, home, nil, envOf(nil))
	if diff := cmp.Diff([]string{"pypi.org:443", "files.pythonhosted.org:443"}, p.Allow); diff != "" {
		t.Errorf("uvx allow (-want +got):\n%s", diff)
	}
	if len(p.Caches) != 2 || p.Caches[0].Path != filepath.Join(home, ".cache", "uv") || p.Env["UV_INDEX_URL"] != "https://pypi.org/simple" {
		t.Errorf("uvx caches %v env %v", p.Caches, p.Env)
	}
	// A user's uv.toml index.
	os.MkdirAll(filepath.Join(home, ".config", "uv"), 0o755)
	os.WriteFile(filepath.Join(home, ".config", "uv", "uv.toml"), []byte("[[index]]\nurl = \"http://10.0.0.5:3141/simple\"\ndefault = true\n"), 0o644)
	p = sandboxOf(project(config.Server{Command: "uvx", Args: []string{"x"}}), ws, home, nil, envOf(nil))
	if diff := cmp.Diff([]string{"10.0.0.5:3141"}, p.Allow); diff != "" || p.Env["UV_INDEX_URL"] != "http://10.0.0.5:3141/simple" {
		t.Errorf("uv.toml: allow %v env %v", p.Allow, p.Env)
	}
	// "network": true needs no list, and gets the registry pinned all the same.
	p = sandboxOf(project(config.Server{Command: "npx", Sandbox: &config.Sandbox{Network: config.SandboxNetwork{All: true}}}), ws, home, nil, envOf(env))
	if len(p.Allow) != 0 || p.Env["npm_config_registry"] == "" {
		t.Errorf("network true: allow %v env %v", p.Allow, p.Env)
	}
}

// The review shows what a path resolves to; files the command line names
// outside the workspace are shown, except in a hidden folder of the home.
func TestSandboxOfLinksAndCommandFiles(t *testing.T) {
	home := t.TempDir()
	ws := filepath.Join(home, "proj")
	os.MkdirAll(filepath.Join(ws, "build"), 0o755)
	os.Symlink("build", filepath.Join(ws, "out"))
	os.Symlink("../../..", filepath.Join(ws, "up"))
	script := filepath.Join(home, "tools", "server.js")
	os.MkdirAll(filepath.Dir(script), 0o755)
	os.WriteFile(script, []byte("//"), 0o644)
	key := filepath.Join(home, ".ssh", "id_rsa")
	os.MkdirAll(filepath.Dir(key), 0o700)
	os.WriteFile(key, []byte("k"), 0o600)

	p := sandboxOf(project(config.Server{Command: "node", Args: []string{script, key, filepath.Join(home, "tools"), "/nonexistent.js"},
		Sandbox: &config.Sandbox{FS: &config.SandboxFS{Write: []string{"out"}}}}), ws, home, nil, envOf(nil))
	if len(p.Refused) != 0 {
		t.Errorf("refused %v", p.Refused)
	}
	if diff := cmp.Diff(map[string]string{filepath.Join(ws, "out"): filepath.Join(ws, "build")}, p.Links); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{script}, p.Files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{key}, p.Unshown); diff != "" {
		t.Errorf("unshown (-want +got):\n%s", diff)
	}
	p = sandboxOf(project(config.Server{Command: "node", Sandbox: &config.Sandbox{FS: &config.SandboxFS{Read: []string{"up"}}}}), ws, home, nil, envOf(nil))
	if len(p.Refused) != 1 || !strings.Contains(p.Refused[0], "up is a link to ../../.., which leads out of "+ws) {
		t.Errorf("refused %q", p.Refused)
	}
}

// The user's own proxy carries the sandbox's relayed connections; the
// words name it, never its credentials.
func TestSandboxOfUsersProxy(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HTTPS_PROXY": "http://me:s3cret@proxy.corp.example:3128", "no_proxy": ".corp.example",
		"npm_config_userconfig": "/nonexistent", "npm_config_globalconfig": "/nonexistent"}
	p := sandboxOf(project(config.Server{Command: "npx", Args: []string{"-y", "x"}}), home, home, nil, envOf(env))
	if p.Proxy == nil || p.Proxy.HTTPS != env["HTTPS_PROXY"] || p.Proxy.NoProxy != ".corp.example" {
		t.Fatalf("proxy %+v", p.Proxy)
	}
	words := config.DescribeSandbox(p, nil)
	if !strings.Contains(words, "through your proxy proxy.corp.example:3128") || strings.Contains(words, "s3cret") {
		t.Errorf("words %q", words)
	}
	// No destination, no proxy.
	p = sandboxOf(project(config.Server{Command: "node"}), home, home, nil, envOf(env))
	if p.Proxy != nil {
		t.Errorf("proxy %+v for a sandbox without network", p.Proxy)
	}
}
