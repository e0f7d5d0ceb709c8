package host

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/proc"
	"github.com/switchboard-mcp/switchboard/internal/safefile"
)

// SandboxOf is the sandbox a stdio server runs in (nil: unconfined), for
// a workspace root ("" when none) and the per-scope defaults of the
// user's or managed settings: what spawn starts it in, and what status,
// `mcp get`, doctor and the approval prompt show. Beyond
// config.EffectiveSandbox it looks at the disk and the user's own
// configuration (this process's environment, the user's files, never the
// repository's): what each path that is a link resolves to, and a path
// below the workspace that leads out of it (which keeps the server from
// starting); the files its command line names that it is shown; and for a
// package runner (npx, uvx, pipx, bunx), a private copy of its cache and
// the registry it downloads from.
func SandboxOf(rs *config.ResolvedServer, workspace string, defaults config.SandboxDefaults) *config.SandboxPolicy {
	home, _ := os.UserHomeDir()
	return sandboxOf(rs, workspace, home, defaults, os.LookupEnv)
}

// runnerEnv is where the server's package runner takes its configuration
// from: this process's environment (Options.LookupEnv), the user's home
// and the host's workspace.
func (s *server) runnerEnv() runnerEnv {
	home, _ := os.UserHomeDir()
	return runnerEnv{home: home, workspace: s.h.workspace(), lookupEnv: s.h.opts.LookupEnv}
}

func sandboxOf(rs *config.ResolvedServer, workspace, home string, defaults config.SandboxDefaults, lookupEnv func(string) (string, bool)) *config.SandboxPolicy {
	p := config.EffectiveSandbox(rs, workspace, home, defaults)
	if p == nil {
		return nil
	}
	resolveSandboxPaths(p)
	protectedPaths(p)
	commandFiles(p, rs, config.DefaultHome(lookupEnv, home))
	e := runnerEnv{home: home, lookupEnv: lookupEnv, workspace: workspace}
	packageRunner(p, rs, e)
	userProxy(p, rs, e)
	p.AbstractSockets = p.NetworkAll && proc.SharedNetworkReachesAbstractSockets()
	return p
}

// resolveSandboxPaths records what each path of p resolves to, when that
// differs, and refuses a path below the workspace that leads out of it
// (or names a device or FIFO), or one no sandbox may have: the runtime
// refuses them at the start all the same (proc.Sandbox.Beneath), this is
// so that the review says so first.
func resolveSandboxPaths(p *config.SandboxPolicy) {
	for _, l := range []struct {
		paths []string
		write bool
	}{{p.Write, true}, {p.Read, false}} {
		for _, path := range l.paths {
			var resolved string
			var err error
			if below(path, p.Workspace) {
				resolved, _, err = proc.ResolveBeneath(p.Workspace, path)
			} else {
				resolved, err = filepath.EvalSymlinks(path)
			}
			switch {
			case errors.Is(err, fs.ErrNotExist):
				continue
			case err != nil:
				p.Refused = append(p.Refused, err.Error())
				continue
			}
			if resolved != path {
				if p.Links == nil {
					p.Links = map[string]string{}
				}
				p.Links[path] = resolved
			}
			if why := proc.SandboxPathRefused(resolved, l.write); why != "" {
				p.Refused = append(p.Refused, path+": "+why)
			}
		}
	}
}

// protectedPaths keeps those of p.Protected that exist and that the
// server sees (a name that does not exist could be kept only by creating
// it in the user's folder; one whose link leads where the server sees
// nothing needs nothing), each as it resolves, and adds the directory that
// a .git pointer file (a worktree's, a submodule's) names, where the
// server sees it: git runs that one's hooks.
func protectedPaths(p *config.SandboxPolicy) {
	var kept []string
	var keep func(path string, depth int)
	keep = func(path string, depth int) {
		name := filepath.Base(path)
		var resolved string
		var fi fs.FileInfo
		var err error
		if below(path, p.Workspace) {
			// What it resolves to is in the view at the same path (the
			// workspace is bound where it is): kept as resolved, a link
			// itself cannot be bound over.
			resolved, fi, err = proc.ResolveBeneath(p.Workspace, path)
			path = resolved
		} else if lfi, lerr := os.Lstat(path); lerr != nil || lfi.Mode()&fs.ModeSymlink != 0 {
			return // a link outside the workspace: where it leads is not where the view has it
		} else if resolved, err = filepath.EvalSymlinks(path); err == nil {
			fi, err = os.Stat(resolved)
		}
		if err != nil || slices.Contains(kept, path) || !writable(p, resolved) {
			return
		}
		kept = append(kept, path)
		if name != ".git" || depth > 0 {
			return
		}
		if fi.Mode().IsRegular() {
			if dir := gitdirOf(resolved); dir != "" {
				keep(dir, depth+1)
			}
		}
		// A submodule's .git is a pointer file too, and `git status` in
		// the repository looks into each submodule, running what its
		// pointer leads to.
		if b, _, err := safefile.Read(filepath.Join(filepath.Dir(path), ".gitmodules"), 1<<16); err == nil {
			for _, sub := range parseGitmodules(string(b)) {
				keep(filepath.Join(filepath.Dir(path), sub, ".git"), depth)
			}
		}
	}
	for _, c := range p.Protected {
		keep(c, 0)
	}
	p.Protected = kept
}

// writable reports whether path (resolved) is one of p's writable paths
// or below one, as written or as it resolves: a kept path that a link
// leads out of them is not bound, which would show the server more.
func writable(p *config.SandboxPolicy, path string) bool {
	for _, w := range p.Write {
		for _, d := range []string{w, p.Links[w]} {
			if d != "" && within(path, d) {
				return true
			}
		}
	}
	return false
}

// gitdirOf is the directory a .git pointer file names ("gitdir: DIR",
// relative to the file's folder), "" when it names none.
func gitdirOf(file string) string {
	// Opened without blocking and checked open: the repository could make
	// it a FIFO after the look.
	b, _, err := safefile.Read(file, 4096)
	if err != nil {
		return ""
	}
	return parseGitdir(string(b), filepath.Dir(file))
}

// parseGitmodules is the submodules' paths a .gitmodules file names
// ("path = sub/dir" in each [submodule] section), each relative and
// within the repository (one that climbs out is left out).
func parseGitmodules(content string) []string {
	var out []string
	for _, line := range strings.Split(content, "\n") {
		key, value, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok || strings.TrimSpace(key) != "path" {
			continue
		}
		p := strings.Trim(strings.TrimSpace(value), `"`)
		if p == "" || strings.ContainsRune(p, 0) || filepath.IsAbs(p) {
			continue
		}
		p = filepath.Clean(p)
		if p == "." || p == ".." || strings.HasPrefix(p, ".."+string(filepath.Separator)) || slices.Contains(out, p) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// parseGitdir is the directory a .git pointer file's content names,
// absolute (a relative one is below dir), "" when it names none.
func parseGitdir(content, dir string) string {
	line, _, _ := strings.Cut(content, "\n")
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if gitdir = strings.TrimSpace(gitdir); !ok || gitdir == "" || strings.ContainsRune(gitdir, 0) {
		return ""
	}
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(dir, gitdir)
	}
	return filepath.Clean(gitdir)
}

// within reports whether path is dir or lies below it.
func within(path, dir string) bool { return path == dir || below(path, dir) }

// below reports whether path is strictly below dir ("" is nothing).
func below(path, dir string) bool {
	if dir == "" || path == dir {
		return false
	}
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// commandFiles adds to p the files outside the workspace that rs's
// command line names by absolute path (a script, a built server): shown
// read-only so that it can run. Only regular files, and none in a hidden
// folder of the home directory (~/.ssh, ~/.aws, ~/.config, …) or in the
// Switchboard home: those are named in Unshown instead, so that a
// repository cannot make its server read a secret by naming it. The
// program itself is shown too when it is an executable file (proc does it).
func commandFiles(p *config.SandboxPolicy, rs *config.ResolvedServer, sbHome string) {
	def := rs.Effective
	self, _ := os.Executable() // shown to every sandbox (see sandboxSpec): not worth naming
	for i, arg := range append([]string{def.Command}, def.Args...) {
		if !filepath.IsAbs(arg) || arg == self {
			continue
		}
		path := filepath.Clean(arg)
		if p.Covers(path) || below(path, p.Workspace) || slices.Contains(p.Files, path) || slices.Contains(p.Unshown, path) || shownAnyway(path) {
			continue
		}
		resolved, err := filepath.EvalSymlinks(path)
		if err != nil {
			continue
		}
		fi, err := os.Stat(resolved)
		if err != nil || !fi.Mode().IsRegular() || i == 0 && fi.Mode()&0o111 == 0 {
			continue
		}
		if hiddenInHome(path, p.Home) || hiddenInHome(resolved, p.Home) || below(resolved, sbHome) || resolved == sbHome {
			if i > 0 { // the program is run, never read: proc shows it
				p.Unshown = append(p.Unshown, path)
			}
			continue
		}
		p.Files = append(p.Files, path)
		if resolved != path {
			if p.Links == nil {
				p.Links = map[string]string{}
			}
			p.Links[path] = resolved
		}
	}
}

// hiddenInHome reports whether path is in a folder of home whose name
// starts with a dot (or is such a file itself).
func hiddenInHome(path, home string) bool {
	if home == "" || !below(path, home) {
		return false
	}
	rel, _ := filepath.Rel(home, path)
	for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
		if strings.HasPrefix(part, ".") {
			return true
		}
	}
	return false
}

// shownAnyway reports a path every sandbox shows (the system directories).
func shownAnyway(path string) bool {
	for _, d := range proc.SystemDirs() {
		if within(path, d) {
			return true
		}
	}
	return false
}

// sandboxSpec is the proc sandbox of server s (nil when unconfined), the
// directory to start it in, given its cwd dir, and its environment env
// with what its package runner is to be told (where def.Env does not say
// otherwise). A sandboxed server without a cwd starts in the workspace,
// which its view holds anyway: the host's own working directory (the home
// directory, say, for a gateway a client started there) would otherwise
// be added to what it may reach. Only with no workspace does it start in
// the host's directory. A start directory the view lacks is added
// (read-write in the default view, read-only in one the definition
// lists), or the server could not start. It fails, saying why, where the
// sandbox refuses the definition (config.SandboxPolicy.Refused).
func (s *server) sandboxSpec(def config.Server, dir string, env []string) (*proc.Sandbox, string, []string, error) {
	e := s.runnerEnv()
	p := sandboxOf(&s.cfg, e.workspace, e.home, s.confine.sandbox, e.lookupEnv)
	if p == nil {
		return nil, dir, env, nil
	}
	if len(p.Refused) > 0 {
		return nil, "", nil, fmt.Errorf("sandbox: it will not start: %s (to give it more, define the server yourself, in your local or user scope, where the paths you name are yours)", strings.Join(p.Refused, "; "))
	}
	start := dir
	if start == "" {
		start = s.h.workspace()
	}
	if start == "" {
		start, _ = os.Getwd()
	}
	if start != "" && !p.Covers(start) {
		if sb := s.cfg.Written.Sandbox; sb == nil || sb.FS == nil {
			p.Write = append(p.Write, start)
		} else {
			p.Read = append(p.Read, start)
		}
	}
	// The host's own program is shown read-only: it is no secret, and a
	// server that runs it (the demo's example server, a wrapper script
	// that execs it) must find it even where it sits under a hidden path
	// such as ~/go/bin or a build cache in /tmp.
	if exe, err := os.Executable(); err == nil && !p.Covers(exe) {
		p.Read = append(p.Read, exe)
	}
	sb := &proc.Sandbox{Read: append(p.Read, p.Files...), Write: p.Write, ReadOnly: p.Protected, Network: p.NetworkAll, Allow: p.Allow,
		Beneath: p.Workspace,
		// A network allow-list is held to the server's outbound address
		// policy, as a remote server's URL is (docs/security.md, "Outbound
		// URL safety"): loopback and private destinations only for a
		// server the user wrote or where the user's settings allow it,
		// and for the registry the user configured. The supervisor
		// resolves names with the system's resolver (Options.Resolver is
		// the host's, in another process).
		AllowPrivate: s.netPolicy().AllowPrivate}
	for _, d := range p.Downloads {
		sb.AllowUser = append(sb.AllowUser, d.Dest)
	}
	for _, c := range p.Caches {
		sb.Caches = append(sb.Caches, proc.Cache{Path: c.Path, Private: c.Private})
	}
	if x := p.Proxy; x != nil {
		sb.Proxy = &proc.ProxyConfig{HTTPProxy: x.HTTP, HTTPSProxy: x.HTTPS, NoProxy: x.NoProxy}
	}
	for k, v := range p.Env {
		if _, ok := def.Env[k]; !ok {
			env = setEnv(env, k, v)
		}
	}
	return sb, start, env, nil
}

// setEnv sets k to v in env (KEY=VALUE entries), replacing any entry of k.
func setEnv(env []string, k, v string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); envName(name) != envName(k) {
			out = append(out, kv)
		}
	}
	return append(out, k+"="+v)
}

// onDarwin: macOS's sandbox profile cannot allow one remote host (see
// proc's seatbelt profile), so a registry there is allowed only on
// loopback.
var onDarwin = runtime.GOOS == "darwin"

// protectedNote adds to res, a tool's error result, what the model and
// the person cannot tell from the server's own words: that a write it
// refused ("Read-only file system", EROFS; EBUSY for a rename onto one)
// went to a path its sandbox
// keeps read-only (its .git, say), why, and where the fix is. A sandboxed
// git server otherwise fails to commit with no word of Switchboard's.
func (s *server) protectedNote(res *mcp.CallToolResult) *mcp.CallToolResult {
	kept := s.protected.Load()
	if kept == nil || len(*kept) == 0 {
		return res
	}
	for _, c := range res.Content {
		t, ok := c.(*mcp.TextContent)
		if !ok {
			continue
		}
		// EROFS for a write there; EBUSY for a rename onto or removal of
		// one (it is a mount point), as a write through a temporary file
		// ends.
		low := strings.ToLower(t.Text)
		if !strings.Contains(low, "read-only file system") && !strings.Contains(t.Text, "EROFS") &&
			!strings.Contains(low, "resource busy") && !strings.Contains(t.Text, "EBUSY") {
			continue
		}
		for _, k := range *kept {
			if !mentionsPath(t.Text, k) {
				continue
			}
			note := fmt.Sprintf("Switchboard: server %s runs in a sandbox that keeps %s read-only (%s), so it cannot write there; `switchboard doctor` says how to allow it.",
				s.name, k, config.ProtectedWhy(filepath.Base(k)))
			out := *res
			out.Content = append(append([]mcp.Content(nil), res.Content...), &mcp.TextContent{Text: note})
			return &out
		}
	}
	return res
}

// mentionsPath reports whether text names path or a path below it: path
// followed by a separator, a quote, a space, a colon or the end.
func mentionsPath(text, path string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], path)
		if j < 0 {
			return false
		}
		end := i + j + len(path)
		if end == len(text) || strings.ContainsRune("/'\"` :),\n", rune(text[end])) {
			return true
		}
		i = end
	}
}
