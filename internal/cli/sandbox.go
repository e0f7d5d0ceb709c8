package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/switchboard-mcp/switchboard"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/proc"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
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
	if workspace == "" && rs.Scope == config.ScopeProject && rs.File != "" {
		workspace = filepath.Dir(rs.File)
	}
	return host.SandboxOf(rs, workspace, defaults)
}

// sandboxWords says in plain words what rs can reach ("" for a remote
// server, which runs elsewhere), and why it will not start where this
// system cannot sandbox it.
func sandboxWords(rs *config.ResolvedServer, workspace string, defaults config.SandboxDefaults, tilde func(string) string) string {
	if config.InferType(rs.Effective) != config.TypeStdio {
		if workspace == "" && rs.Scope == config.ScopeProject && rs.File != "" {
			workspace = filepath.Dir(rs.File)
		}
		return helperWords(rs, host.HelperSandboxOf(rs, workspace, defaults), tilde)
	}
	p := sandboxOf(rs, workspace, defaults)
	s := config.DescribeSandbox(p, tilde)
	if p != nil {
		if why := proc.SandboxSupport(); why != "" {
			s += " — but it cannot start here: " + why
		}
	}
	return s
}

// reviewSandboxWords is what the approval review says of the sandbox the
// front door will run the server in.
func reviewSandboxWords(r switchboard.Review) string {
	if config.InferType(r.Server.Effective) != config.TypeStdio {
		return helperWords(r.Server, r.HelperSandbox, nil)
	}
	s := config.DescribeSandbox(r.Sandbox, nil)
	if r.Sandbox != nil {
		if why := proc.SandboxSupport(); why != "" {
			s += " — but it cannot start here: " + why
		}
	}
	return s
}

// helperWords says what a repository's headersHelper (of a remote server)
// can reach, p being its sandbox: "" for a server without one, or one the
// user wrote (it runs as the user's servers do).
func helperWords(rs *config.ResolvedServer, p *config.SandboxPolicy, tilde func(string) string) string {
	if rs.Effective.HeadersHelper == "" || rs.Trust != config.TrustRepo {
		return ""
	}
	s := "headersHelper " + config.DescribeSandbox(p, tilde)
	if p != nil {
		if why := proc.SandboxSupport(); why != "" {
			s += " — but it cannot run here: " + why
		}
	}
	return s
}

// sandboxWords is what the approval review says of rs's sandbox.
func (lt *launchTrust) sandboxWords(rs *config.ResolvedServer) string {
	if lt == nil {
		return sandboxWords(rs, "", nil, nil)
	}
	return sandboxWords(rs, lt.Workspace(), lt.SandboxDefaults(), nil)
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
// reach; a failure where this system cannot sandbox it, with how to run
// it unconfined; and, when its stderr shows a file it was refused
// (ENOENT, EACCES, EROFS) outside what the sandbox shows, that path, or
// a destination it could not reach that its network does not list.
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
	unconfine := fmt.Sprintf(`to run it unconfined, give it "sandbox": false (or, for every %s server, {"sandbox": {%q: false}} in %s)`,
		rs.Scope, rs.Scope, o.tilde(policy.UserSettingsPath(o.Home)))
	if why := proc.SandboxSupport(); why != "" {
		return check("sandbox", rs.Name, doctorFail, "it must run sandboxed and cannot here: "+why, unconfine), true
	}
	if st.State == host.StateError || st.State == host.StateCircuitOpen {
		if path, ok := refusedPath(st.StderrTail, p); ok {
			c := check("sandbox", rs.Name, doctorFail, fmt.Sprintf("%s; it was refused %s, which its sandbox does not show", words, o.tilde(path)),
				fmt.Sprintf(`add %s to its "sandbox": {"fs": {"read": […]}}, or %s`, o.tilde(path), unconfine))
			return c, true
		}
		if dest, ok := refusedDestination(st.StderrTail, p); ok { // sandbox_net.go
			return check("sandbox", rs.Name, doctorFail, fmt.Sprintf("%s; it could not reach %s, which its sandbox does not list", words, dest),
				fmt.Sprintf(`add %q to its "sandbox": {"network": […]}, or %s`, dest, unconfine)), true
		}
	}
	return check("sandbox", rs.Name, doctorPass, words, ""), true
}

// refusedPath finds, in a server's stderr, an absolute path named next to
// a "not found" or "not permitted" error, that the sandbox p does not show.
func refusedPath(stderr []string, p *config.SandboxPolicy) (string, bool) {
	for i := len(stderr) - 1; i >= 0; i-- {
		l := stderr[i]
		low := strings.ToLower(l)
		if !strings.Contains(low, "enoent") && !strings.Contains(low, "eacces") && !strings.Contains(low, "erofs") &&
			!strings.Contains(low, "no such file") && !strings.Contains(low, "permission denied") && !strings.Contains(low, "read-only file system") {
			continue
		}
		for _, f := range strings.FieldsFunc(l, func(r rune) bool {
			return r == ' ' || r == '\'' || r == '"' || r == ',' || r == ':' || r == '(' || r == ')'
		}) {
			if filepath.IsAbs(f) && !p.Covers(f) && !sandboxSystemPath(f) {
				return filepath.Clean(f), true
			}
		}
	}
	return "", false
}

// sandboxSystemPath reports a path the sandbox shows read-only anyway.
func sandboxSystemPath(path string) bool {
	for _, d := range []string{"/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc", "/opt", "/tmp", "/dev", "/proc"} {
		if path == d || strings.HasPrefix(path, d+"/") {
			return true
		}
	}
	return false
}
