package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/lazyre"
	"github.com/switchboard-mcp/switchboard/internal/proc"
	"github.com/switchboard-mcp/switchboard/internal/review"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
	"github.com/switchboard-mcp/switchboard/internal/watch"
	"github.com/switchboard-mcp/switchboard/policy"
)

// sandboxDefaults reads the per-scope sandbox defaults of the user's
// settings, then --settings, then managed settings, each overriding the
// one before; never project settings: a repository must not unconfine its
// own servers (config.SettingsStack.SandboxDefaults). A file that cannot
// be read sets nothing.
func (f *Factory) sandboxDefaults() config.SandboxDefaults {
	st, err := f.settingsStack(nil)
	if err != nil {
		return nil
	}
	return st.SandboxDefaults()
}

// sandboxOf is the effective sandbox of rs in workspace (for a project
// server, its file's directory when workspace is "").
func sandboxOf(rs *config.ResolvedServer, workspace string, defaults config.SandboxDefaults) *config.SandboxPolicy {
	return host.SandboxOf(rs, review.SandboxWorkspace(rs, workspace), defaults)
}

// sandboxPolicies are what rs would be confined to in workspace: a stdio
// server's sandbox (host.SandboxOf) or a remote server's headersHelper's
// (host.HelperSandboxOf); nil where it would run unconfined.
func sandboxPolicies(rs *config.ResolvedServer, workspace string, defaults config.SandboxDefaults) (sandbox, helper *config.SandboxPolicy) {
	ws := review.SandboxWorkspace(rs, workspace)
	if config.InferType(rs.Effective) != config.TypeStdio {
		return nil, host.HelperSandboxOf(rs, ws, defaults)
	}
	return host.SandboxOf(rs, ws, defaults), nil
}

// sandboxWords says in plain words what rs can reach ("" for a remote
// server, which runs elsewhere), and why it will not start where this
// system cannot sandbox it (review.SandboxWords: the console's words too).
func sandboxWords(rs *config.ResolvedServer, workspace string, defaults config.SandboxDefaults, tilde func(string) string) string {
	sandbox, helper := sandboxPolicies(rs, workspace, defaults)
	return review.SandboxWords(rs, sandbox, helper, tilde)
}

// sandboxPolicies are what the approval review of rs says it would be
// confined to.
func (lt *launchTrust) sandboxPolicies(rs *config.ResolvedServer) (sandbox, helper *config.SandboxPolicy) {
	if lt == nil {
		return sandboxPolicies(rs, "", nil)
	}
	return sandboxPolicies(rs, lt.Workspace(), lt.SandboxDefaults())
}

// sandboxes says what each stdio server of the session can reach.
func (s *session) sandboxes() map[string]string {
	var defaults config.SandboxDefaults
	if s.opts.Sandbox != nil {
		defaults = s.opts.Sandbox()
	}
	out := map[string]string{}
	for i := range s.cfg.Servers {
		rs := &s.cfg.Servers[i]
		if w := sandboxWords(rs, s.cfg.Workspace, defaults, s.opts.tilde); w != "" {
			out[rs.Name] = w
		}
	}
	return out
}

// sandboxRefusals are what the stderr of each sandboxed server not
// connected shows its sandbox refused it (sandboxRefusal).
func (s *session) sandboxRefusals(servers []host.ServerStatus) map[string]refusal {
	var defaults config.SandboxDefaults
	if s.opts.Sandbox != nil {
		defaults = s.opts.Sandbox()
	}
	out := map[string]refusal{}
	for _, st := range servers {
		i := slices.IndexFunc(s.cfg.Servers, func(rs config.ResolvedServer) bool { return rs.Name == st.Name })
		if i < 0 || config.InferType(s.cfg.Servers[i].Effective) != config.TypeStdio {
			continue
		}
		rs := &s.cfg.Servers[i]
		if r, ok := sandboxRefusal(rs, st, sandboxOf(rs, s.cfg.Workspace, defaults), s.opts); ok {
			out[st.Name] = r
		}
	}
	return out
}

// printSandboxes is status's "Sandboxes" block: one line per stdio server.
func printSandboxes(w io.Writer, r statusReport) {
	if len(r.Sandbox) == 0 {
		return
	}
	fmt.Fprintln(w, "\nSandboxes:")
	for _, st := range r.Servers {
		if words, ok := r.Sandbox[st.Name]; ok {
			fmt.Fprintf(w, "  %s: %s\n", termsafe.Line(st.Name), termsafe.Line(words))
		}
	}
}

// sandboxCheck is doctor's sandbox line for a sandboxed server: what it can
// reach; a failure where this system cannot sandbox it, or where its
// sandbox refuses its definition, with how to run it unconfined; and,
// when its stderr shows what its sandbox refused it (sandboxRefusal), as
// soon as it shows it — still connecting or ended — that, with the exact
// setting that allows it.
func sandboxCheck(rs *config.ResolvedServer, st host.ServerStatus, workspace string, o *runtimeOptions) (doctorCheck, bool) {
	if config.InferType(rs.Effective) != config.TypeStdio || rs.Availability != config.Available {
		return doctorCheck{}, false
	}
	var defaults config.SandboxDefaults
	if o.Sandbox != nil {
		defaults = o.Sandbox()
	}
	p := sandboxOf(rs, workspace, defaults)
	words := config.DescribeSandbox(p, o.tilde)
	if p == nil {
		return doctorCheck{}, false // unconfined, as the user wrote it: status and mcp get say so
	}
	if why := proc.SandboxSupport(); why != "" {
		return check("sandbox", rs.Name, doctorFail, "it must run sandboxed and cannot here: "+why, unconfineHint(rs, o)), true
	}
	if len(p.Refused) > 0 {
		return check("sandbox", rs.Name, doctorFail, words,
			"a repository's server may see only its workspace, without links that lead out of it: fix the definition, or define the server yourself (in your local scope) with the paths you mean, or "+unconfineHint(rs, o)), true
	}
	if r, ok := sandboxRefusal(rs, st, p, o); ok {
		return check("sandbox", rs.Name, doctorFail, words+"; "+r.What, r.Fix), true
	}
	if g := protectedGit(p); g != "" && gitServer(rs.Effective) {
		// Connected, it fails only on a commit, in a tool's result: say
		// so before.
		return check("sandbox", rs.Name, doctorNote, words+"; it looks like a git server, and its sandbox keeps "+o.tilde(g)+
			" read-only ("+config.ProtectedWhy(".git")+"): it can read the history, not commit", grantFix(rs, p, "write", g, o)), true
	}
	return check("sandbox", rs.Name, doctorPass, words, ""), true
}

// protectedGit is the .git p keeps read-only, "" if none.
func protectedGit(p *config.SandboxPolicy) string {
	for _, k := range p.Protected {
		if filepath.Base(k) == ".git" {
			return k
		}
	}
	return ""
}

// gitServer reports whether def's command line names git as a word of a
// program or package (git, mcp-server-git, @cyanheads/git-mcp-server; not
// github-mcp-server): a server that may commit.
func gitServer(def config.Server) bool {
	for _, w := range append([]string{def.Command}, def.Args...) {
		for _, part := range strings.FieldsFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if part == "git" {
				return true
			}
		}
	}
	return false
}

// unconfineHint says how to run rs unconfined.
func unconfineHint(rs *config.ResolvedServer, o *runtimeOptions) string {
	return fmt.Sprintf(`to run it unconfined, give it "sandbox": false (or, for every %s server, {"sandbox": {%q: false}} in %s)`,
		rs.Scope, rs.Scope, o.tilde(policy.UserSettingsPath(o.Home)))
}

// refusal is what a sandboxed server's stderr says its sandbox refused it,
// in words that name the sandbox (What), and the exact setting that
// allows it (Fix).
type refusal struct{ What, Fix string }

// sandboxRefusal recognises, in the stderr of server rs (sandboxed by p),
// a refusal by its sandbox: a path it was refused (ENOENT, EACCES, EROFS)
// that its sandbox does not show, or shows read-only; a module it could
// not load (Node's "Cannot find module", Python's ModuleNotFoundError),
// found on the disk where the sandbox does not look; a destination it
// could not reach that its network does not list. Only while it is not
// connected (still connecting, or ended): a connected server's stderr is
// history.
func sandboxRefusal(rs *config.ResolvedServer, st host.ServerStatus, p *config.SandboxPolicy, o *runtimeOptions) (refusal, bool) {
	if p == nil || st.State == host.StateConnected || len(st.StderrTail) == 0 {
		return refusal{}, false
	}
	if path, write, ok := refusedPath(st.StderrTail, p); ok {
		if k := p.ProtectedBy(path); write && k != "" {
			return refusal{"its sandbox keeps " + o.tilde(k) + " read-only (" + config.ProtectedWhy(filepath.Base(k)) + "), and it writes there",
				grantFix(rs, p, "write", k, o)}, true
		}
		if write {
			return refusal{"its sandbox shows " + o.tilde(path) + " read-only, and it writes there",
				grantFix(rs, p, "write", path, o)}, true
		}
		return refusal{"it was refused " + o.tilde(path) + ", which its sandbox does not show",
			grantFix(rs, p, "read", path, o)}, true
	}
	if mod, dir, ok := missingModule(st.StderrTail, p); ok {
		if dir == "" {
			return refusal{"it could not load the module " + mod + ", which may be installed where its sandbox does not look",
				`if it is installed outside what its sandbox shows, add that folder to its "sandbox": {"fs": {"read": […]}}, or ` + unconfineHint(rs, o)}, true
		}
		return refusal{"it could not load the module " + mod + ", which is in " + o.tilde(dir) + ", where its sandbox does not look",
			grantFix(rs, p, "read", dir, o)}, true
	}
	if dest, ok := refusedDestination(st.StderrTail, p); ok { // sandbox_net.go
		return refusal{"it could not reach " + dest + ", which its sandbox does not list",
			grantFix(rs, p, "network", dest, o)}, true
	}
	return refusal{}, false
}

// grantFix is the exact setting that gives rs's sandbox value (a path to
// read or write, or a "host:port"), or how to run it unconfined. A server
// the user wrote gets it in its own definition. A repository's cannot (it
// may name only its workspace, and a change would make its approval stale):
// the user defines the server in their local scope, which takes its place,
// with the sandbox it has plus value.
func grantFix(rs *config.ResolvedServer, p *config.SandboxPolicy, field, value string, o *runtimeOptions) string {
	written := rs.Written.Sandbox
	var sb config.Sandbox
	if written != nil && !written.Off {
		sb = *written
	}
	if sb.FS != nil {
		fs := *sb.FS
		sb.FS = &fs
	}
	shown := o.tilde(value)
	switch field {
	case "network":
		sb.Network.Allow = append(slices.Clone(sb.Network.Allow), value)
	default:
		if sb.FS == nil { // the default view: the workspace (and its cwd), read-write
			sb.FS = &config.SandboxFS{Write: []string{"."}}
			if rs.Scope != config.ScopeProject && p.Workspace == "" {
				sb.FS.Write = slices.Clone(p.Write)
			}
		}
		if field == "write" {
			sb.FS.Write = append(slices.Clone(sb.FS.Write), shown)
		} else {
			sb.FS.Read = append(slices.Clone(sb.FS.Read), shown)
		}
	}
	key := map[string]string{"network": `"network"`, "read": `"fs": {"read": […]}`, "write": `"fs": {"write": […]}`}[field]
	if rs.Scope != config.ScopeProject {
		where := ""
		if rs.File != "" {
			where = " in " + o.tilde(rs.File)
		}
		b, _ := json.Marshal(sb)
		return fmt.Sprintf("add %q to its \"sandbox\": {%s}%s, so: \"sandbox\": %s; or %s", shown, key, where, b, unconfineHint(rs, o))
	}
	def := rs.Written
	def.Sandbox = &sb
	b, _ := json.Marshal(def)
	return fmt.Sprintf("a repository's server may see only its workspace: define it yourself, with %s added, in your local scope (it takes the project one's place): switchboard mcp add-json --scope local %s %s; or %s",
		shown, shellQuote(rs.Name), shellQuote(string(b)), unconfineHint(rs, o))
}

var (
	nodeMissing   = lazyre.New(`Cannot find (?:module|package) '([^']+)'`)
	pythonMissing = lazyre.New(`ModuleNotFoundError: No module named '([^']+)'`)
)

// missingModule finds, in a server's stderr, a module Node or Python could
// not load, and the folder on this machine that holds it where the
// sandbox p does not look ("" when none is found): a path Node names, a
// package in NODE_PATH or npm's global folder, a Python module in the
// user's site-packages (~/.local/lib/python3.*/site-packages) or
// PYTHONPATH.
func missingModule(stderr []string, p *config.SandboxPolicy) (mod, dir string, ok bool) {
	// The user's own environment and home: where they installed modules.
	getenv := os.Getenv
	home, _ := os.UserHomeDir()
	hidden := func(d string) bool { return d != "" && !p.Covers(d) && !sandboxSystemPath(d) }
	for i := len(stderr) - 1; i >= 0; i-- {
		l := stderr[i]
		if m := nodeMissing().FindStringSubmatch(l); m != nil {
			mod = m[1]
			if filepath.IsAbs(mod) {
				for d := filepath.Dir(mod); d != "/" && d != "."; d = filepath.Dir(d) {
					if fi, err := os.Stat(d); err == nil && fi.IsDir() {
						if hidden(d) {
							return mod, d, true
						}
						break
					}
				}
				return mod, "", true
			}
			var roots []string
			roots = append(roots, filepath.SplitList(getenv("NODE_PATH"))...)
			if node, err := exec.LookPath("node"); err == nil {
				if real, err := filepath.EvalSymlinks(node); err == nil {
					roots = append(roots, filepath.Join(filepath.Dir(filepath.Dir(real)), "lib", "node_modules"))
				}
			}
			if home != "" {
				roots = append(roots, filepath.Join(home, ".npm-global", "lib", "node_modules"))
			}
			parts := strings.SplitN(mod, "/", 3) // "@scope/pkg/file" or "pkg/file"
			pkg := parts[0]
			if strings.HasPrefix(mod, "@") && len(parts) > 1 {
				pkg += "/" + parts[1]
			}
			for _, r := range roots {
				if _, err := os.Stat(filepath.Join(r, pkg, "package.json")); err == nil && hidden(r) {
					return mod, r, true
				}
			}
			return mod, "", true
		}
		if m := pythonMissing().FindStringSubmatch(l); m != nil {
			mod = m[1]
			top := strings.SplitN(mod, ".", 2)[0]
			var roots []string
			roots = append(roots, filepath.SplitList(getenv("PYTHONPATH"))...)
			if home != "" {
				site, _ := filepath.Glob(filepath.Join(home, ".local", "lib", "python3*", "site-packages"))
				roots = append(roots, site...)
			}
			for _, r := range roots {
				for _, c := range []string{filepath.Join(r, top), filepath.Join(r, top+".py")} {
					if _, err := os.Stat(c); err == nil && hidden(r) {
						return mod, r, true
					}
				}
			}
			return mod, "", true
		}
	}
	return "", "", false
}

// refusedPath finds, in a server's stderr, an absolute path named next to
// a "not found" or "not permitted" error, that the sandbox p does not show
// (write false), or a read-only file system error on a path it shows only
// read-only (write true).
func refusedPath(stderr []string, p *config.SandboxPolicy) (path string, write, ok bool) {
	for i := len(stderr) - 1; i >= 0; i-- {
		l := stderr[i]
		low := strings.ToLower(l)
		rofs := strings.Contains(low, "erofs") || strings.Contains(low, "read-only file system")
		if !rofs && !strings.Contains(low, "enoent") && !strings.Contains(low, "eacces") &&
			!strings.Contains(low, "no such file") && !strings.Contains(low, "permission denied") {
			continue
		}
		for _, f := range strings.FieldsFunc(l, func(r rune) bool {
			return r == ' ' || r == '\'' || r == '"' || r == ',' || r == ':' || r == '(' || r == ')'
		}) {
			if !filepath.IsAbs(f) || sandboxSystemPath(f) {
				continue
			}
			f = filepath.Clean(f)
			switch {
			case !p.Covers(f):
				return f, false, true
			case rofs && (!slices.ContainsFunc(p.Write, func(w string) bool { return watch.Within(f, w) }) || p.ProtectedBy(f) != ""):
				return f, true, true
			}
		}
	}
	return "", false, false
}

// sandboxSystemPath reports a path the sandbox shows anyway (the system
// directories read-only, its private /tmp, its devices, its /proc).
func sandboxSystemPath(path string) bool {
	for _, d := range append(proc.SystemDirs(), "/tmp", "/dev", "/proc") {
		if path == d || strings.HasPrefix(path, d+"/") {
			return true
		}
	}
	return false
}

// sandboxRefused reports whether rs's stderr shows a refusal by its
// sandbox (sandboxRefusal).
func sandboxRefused(rs config.ResolvedServer, st host.ServerStatus, workspace string, o *runtimeOptions) bool {
	var defaults config.SandboxDefaults
	if o.Sandbox != nil {
		defaults = o.Sandbox()
	}
	_, ok := sandboxRefusal(&rs, st, sandboxOf(&rs, workspace, defaults), o)
	return ok
}
