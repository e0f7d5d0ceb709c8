package host

import (
	"os"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/proc"
)

// SandboxOf is the sandbox a stdio server runs in (nil: unconfined), for
// a workspace root ("" when none) and the per-scope defaults of the
// user's or managed settings: what spawn starts it in, and what status,
// `mcp get`, doctor and the approval prompt show.
func SandboxOf(rs *config.ResolvedServer, workspace string, defaults config.SandboxDefaults) *config.SandboxPolicy {
	home, _ := os.UserHomeDir()
	return config.EffectiveSandbox(rs, workspace, home, defaults)
}

// sandboxSpec is the proc sandbox of server s (nil when unconfined) and
// the directory to start it in, given its cwd dir. A sandboxed server
// without a cwd starts in the workspace, which its view holds anyway: the
// host's own working directory (the home directory, say, for a gateway a
// client started there) would otherwise be added to what it may reach.
// Only with no workspace does it start in the host's directory. A start
// directory the view lacks is added (read-write in the default view,
// read-only in one the definition lists), or the server could not start.
func (s *server) sandboxSpec(dir string) (*proc.Sandbox, string) {
	p := SandboxOf(&s.cfg, s.h.workspace(), s.h.opts.SandboxDefaults)
	if p == nil {
		return nil, dir
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
	// A network allow-list is held to the server's outbound address
	// policy, as a remote server's URL is (docs/security.md, "Outbound URL
	// safety"): loopback and private destinations only for a server the
	// user wrote or where the user's settings allow it. The supervisor
	// resolves names with the system's resolver (Options.Resolver is the
	// host's, in another process).
	return &proc.Sandbox{Read: p.Read, Write: p.Write, Network: p.NetworkAll, Allow: p.Allow,
		AllowPrivate: s.netPolicy().AllowPrivate}, start
}
