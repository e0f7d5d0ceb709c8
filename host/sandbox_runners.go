package host

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/lazyre"
)

// runnerEnv is where a package runner's configuration is read from: the
// user's environment and files, never the workspace's.
type runnerEnv struct {
	home, workspace string
	lookupEnv       func(string) (string, bool)
}

// get is the first of keys set to a value that is not empty.
func (e runnerEnv) get(keys ...string) string {
	for _, k := range keys {
		if v, ok := e.lookupEnv(k); ok && v != "" {
			return v
		}
	}
	return ""
}

// or is path, else home joined with rel.
func (e runnerEnv) or(path string, rel ...string) string {
	if path != "" {
		return path
	}
	if e.home == "" {
		return ""
	}
	return filepath.Join(append([]string{e.home}, rel...)...)
}

const (
	npmRegistry  = "https://registry.npmjs.org/"
	pypiIndex    = "https://pypi.org/simple"
	pypiDownload = "https://files.pythonhosted.org/"
)

// packageRunner adds to p what a package runner needs to work sandboxed,
// as the user configured it: its caches as private copies (an unsandboxed
// server never runs what a sandboxed one wrote there), the registry it
// downloads from (allowed, loopback and private addresses included: the
// user configured it), and, in the server's environment, that registry
// and those caches (so that a repository's .npmrc, uv.toml or pip.conf
// cannot point it elsewhere) and fetch retries short enough that a server
// that cannot download fails in seconds.
func packageRunner(p *config.SandboxPolicy, rs *config.ResolvedServer, e runnerEnv) {
	runner := config.Runner(rs.Effective.Command)
	if runner == "" {
		return
	}
	if p.Env == nil {
		p.Env = map[string]string{}
	}
	// The repository's servers and the user's own (sandboxed by the
	// user's choice, with the user's whole environment) never share a
	// copy: what one wrote there, the other would run. Neither uses the
	// folder both shared before (sandbox/<workspace>/<cache>), which may
	// hold what a repository's server wrote.
	trust := "user"
	if rs.Trust == config.TrustRepo {
		trust = "repo"
	}
	private := func(name string) string {
		return filepath.Join(config.DefaultHome(e.lookupEnv, e.home), "sandbox", workspaceKey(e.workspace), trust, name)
	}
	cache := func(name, env, path string) {
		if path == "" || !filepath.IsAbs(path) {
			return
		}
		path = filepath.Clean(path)
		p.Caches = append(p.Caches, config.SandboxCache{Runner: runner, Path: path, Private: private(name)})
		if env != "" {
			p.Env[env] = path
		}
	}
	download := func(what, u string) {
		dest := urlDest(u)
		if dest == "" || onDarwin && !loopbackDest(dest) {
			return
		}
		if slices.ContainsFunc(p.Downloads, func(d config.SandboxDownload) bool { return d.Dest == dest }) {
			return
		}
		p.Downloads = append(p.Downloads, config.SandboxDownload{Runner: runner, What: what, URL: u, Dest: dest})
		if !p.NetworkAll && !slices.Contains(p.Allow, dest) {
			p.Allow = append(p.Allow, dest)
		}
	}
	switch runner {
	case "npm", "bun":
		cfg := npmConfig(e)
		reg := cfg["registry"]
		what := "your npm registry"
		if reg == "" || reg == npmRegistry {
			reg, what = npmRegistry, "the npm registry"
		}
		if runner == "npm" {
			cache("npm", "npm_config_cache", e.or(cfg["cache"], ".npm"))
			p.Env["npm_config_registry"] = reg
			// npm waits out its retries (10 s, then up to a minute) before
			// it falls back to its cache or gives up: one quick retry.
			p.Env["npm_config_fetch_retries"] = "1"
			p.Env["npm_config_fetch_retry_mintimeout"] = "1000"
			p.Env["npm_config_fetch_retry_maxtimeout"] = "2000"
			p.Env["npm_config_update_notifier"] = "false"
			p.Env["npm_config_audit"] = "false"
			p.Env["npm_config_fund"] = "false"
		} else {
			bunCache := e.get("BUN_INSTALL_CACHE_DIR")
			if bunCache == "" {
				bunCache = filepath.Join(e.or(e.get("BUN_INSTALL"), ".bun"), "install", "cache")
			}
			cache("bun", "BUN_INSTALL_CACHE_DIR", bunCache)
			p.Env["NPM_CONFIG_REGISTRY"] = reg
		}
		download(what, reg)
		var scopes []string
		for k := range cfg {
			if strings.HasPrefix(k, "@") && strings.HasSuffix(k, ":registry") {
				scopes = append(scopes, k)
			}
		}
		sort.Strings(scopes)
		for _, k := range scopes {
			download("your "+strings.TrimSuffix(k, ":registry")+" registry", cfg[k])
		}
	case "uv":
		cache("uv", "UV_CACHE_DIR", cmp.Or(e.get("UV_CACHE_DIR"), xdg(e, "XDG_CACHE_HOME", ".cache", "uv")))
		cache("uv-python", "UV_PYTHON_INSTALL_DIR", cmp.Or(e.get("UV_PYTHON_INSTALL_DIR"), xdg(e, "XDG_DATA_HOME", ".local/share", "uv", "python")))
		key, index := "UV_DEFAULT_INDEX", e.get("UV_DEFAULT_INDEX")
		if index == "" {
			key, index = "UV_INDEX_URL", e.get("UV_INDEX_URL")
		}
		if index == "" {
			for _, f := range []string{xdg(e, "XDG_CONFIG_HOME", ".config", "uv", "uv.toml"), "/etc/uv/uv.toml"} {
				if index = config.ParseUvIndex(readUserFile(f)); index != "" {
					break
				}
			}
		}
		pythonIndex(p, index, key, download)
	case "pipx":
		cache("pipx", "PIPX_HOME", e.or(e.get("PIPX_HOME"), ".local", "share", "pipx"))
		cache("pip", "PIP_CACHE_DIR", cmp.Or(e.get("PIP_CACHE_DIR"), xdg(e, "XDG_CACHE_HOME", ".cache", "pip")))
		index := e.get("PIP_INDEX_URL")
		if index == "" {
			files := []string{"/etc/pip.conf", "/etc/xdg/pip/pip.conf", e.or("", ".pip", "pip.conf"), xdg(e, "XDG_CONFIG_HOME", ".config", "pip", "pip.conf")}
			if f := e.get("PIP_CONFIG_FILE"); f != "" {
				files = append(files, f)
			}
			for _, f := range files { // later files win, as pip reads them
				ini := config.ParseIni(readUserFile(f))
				for _, section := range []string{"global", "install"} {
					if v := ini[section]["index-url"]; v != "" {
						index = v
					}
				}
			}
		}
		pythonIndex(p, index, "PIP_INDEX_URL", download)
	}
}

// userProxy records in p the user's own HTTP proxy, through which the
// sandbox's relay reaches the destinations it allows, as every other
// program of theirs does: HTTPS_PROXY, HTTP_PROXY and NO_PROXY (either
// case), and for npm its https-proxy, proxy and noproxy settings. Only for
// a sandbox with destinations of its own; one with the full network uses
// the network as it is.
func userProxy(p *config.SandboxPolicy, rs *config.ResolvedServer, e runnerEnv) {
	if p.NetworkAll || len(p.Allow) == 0 {
		return
	}
	x := config.SandboxProxy{
		HTTPS:   e.get("HTTPS_PROXY", "https_proxy"),
		HTTP:    e.get("HTTP_PROXY", "http_proxy"),
		NoProxy: e.get("NO_PROXY", "no_proxy"),
	}
	if r := config.Runner(rs.Effective.Command); r == "npm" || r == "bun" {
		cfg := npmConfig(e)
		x.HTTPS = cmp.Or(cfg["https-proxy"], x.HTTPS, cfg["proxy"])
		x.HTTP = cmp.Or(cfg["proxy"], x.HTTP)
		x.NoProxy = cmp.Or(cfg["noproxy"], x.NoProxy)
	}
	if x.HTTPS != "" || x.HTTP != "" {
		p.Proxy = &x
	}
}

// pythonIndex allows the Python package index (the user's, or PyPI, whose
// files come from another host) and names it in the environment.
func pythonIndex(p *config.SandboxPolicy, index, key string, download func(what, u string)) {
	if index == "" || strings.TrimSuffix(index, "/") == pypiIndex {
		p.Env[key] = pypiIndex
		download("the Python package index", pypiIndex)
		download("the Python package index", pypiDownload)
		return
	}
	p.Env[key] = index
	download("your Python package index", index)
}

// xdg is $envKey/rel…, else ~/dflt/rel….
func xdg(e runnerEnv, envKey, dflt string, rel ...string) string {
	if base := e.get(envKey); filepath.IsAbs(base) {
		return filepath.Join(append([]string{base}, rel...)...)
	}
	return e.or("", append([]string{dflt}, rel...)...)
}

// npmConfig is the part of npm's configuration that a sandboxed npm needs
// (registry, scoped registries, cache, proxy), as npm would read it for the user,
// lowest first: its built-in npmrc, the global npmrc, the user's npmrc,
// then npm_config_* variables. A project's .npmrc is not read: it is the
// repository's. ${VAR} in a value is expanded from the environment.
func npmConfig(e runnerEnv) map[string]string {
	out := map[string]string{}
	env := func(key string) string {
		key = strings.ReplaceAll(key, "-", "_")
		return e.get("npm_config_"+key, "NPM_CONFIG_"+strings.ToUpper(key))
	}
	var files []string
	if npm, err := exec.LookPath("npm"); err == nil {
		if real, err := filepath.EvalSymlinks(npm); err == nil {
			files = append(files, filepath.Join(filepath.Dir(filepath.Dir(real)), "npmrc"))
		}
	}
	global := env("globalconfig")
	if global == "" {
		prefix := env("prefix")
		if prefix == "" {
			if node, err := exec.LookPath("node"); err == nil {
				if real, err := filepath.EvalSymlinks(node); err == nil {
					prefix = filepath.Dir(filepath.Dir(real))
				}
			}
		}
		if prefix != "" {
			global = filepath.Join(prefix, "etc", "npmrc")
		}
	}
	files = append(files, global, e.or(env("userconfig"), ".npmrc"))
	for _, f := range files {
		for k, v := range config.ParseNpmrc(readUserFile(f)) {
			switch {
			case k == "registry", k == "cache", k == "proxy", k == "https-proxy", k == "noproxy",
				strings.HasPrefix(k, "@") && strings.HasSuffix(k, ":registry"):
				out[k] = expandNpm(v, e)
			}
		}
	}
	for _, k := range []string{"registry", "cache", "proxy", "https-proxy", "noproxy"} {
		if v := env(k); v != "" {
			out[k] = v
		}
	}
	if c := out["cache"]; strings.HasPrefix(c, "~/") {
		out["cache"] = e.or("", c[2:])
	}
	return out
}

var npmVar = lazyre.New(`\$\{([^${}]+)\}`)

// expandNpm replaces ${VAR} in an npmrc value, as npm does.
func expandNpm(v string, e runnerEnv) string {
	return npmVar().ReplaceAllStringFunc(v, func(m string) string {
		val, _ := e.lookupEnv(m[2 : len(m)-1])
		return val
	})
}

// readUserFile is a configuration file of the user's: a regular file of
// at most 1 MiB, else nothing.
func readUserFile(path string) []byte {
	if path == "" {
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 1<<20 {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 1<<20))
	return b
}

// urlDest is the "host:port" an http(s) URL connects to, "" when it is
// none.
func urlDest(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" || u.Scheme != "http" && u.Scheme != "https" {
		return ""
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return ""
	}
	return net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// loopbackDest reports a "host:port" on the host's loopback.
func loopbackDest(dest string) bool {
	h, _, _ := net.SplitHostPort(dest)
	a, err := netip.ParseAddr(h)
	return h == "localhost" || err == nil && a.IsLoopback()
}

// workspaceKey names a workspace's private caches: its path's SHA-256,
// shortened.
func workspaceKey(ws string) string {
	if ws == "" {
		return "no-workspace"
	}
	sum := sha256.Sum256([]byte(ws))
	return hex.EncodeToString(sum[:8])
}
