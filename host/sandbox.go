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

// sandboxSpec is the proc sandbox of server s, started in dir, nil when
// unconfined. A server without a cwd starts in the host's working
// directory, which its sandbox then shows too (read-write in the default
// view, read-only in one the definition lists), or it could not start.
func (s *server) sandboxSpec(dir string) *proc.Sandbox {
	p := SandboxOf(&s.cfg, s.h.workspace(), s.h.opts.SandboxDefaults)
	if p == nil {
		return nil
	}
	if dir == "" {
		dir, _ = os.Getwd()
	}
	if dir != "" && !p.Covers(dir) {
		if sb := s.cfg.Written.Sandbox; sb == nil || sb.FS == nil {
			p.Write = append(p.Write, dir)
		} else {
			p.Read = append(p.Read, dir)
		}
	}
	// The host's own program is shown read-only: it is no secret, and a
	// server that runs it (the demo's example server, a wrapper script
	// that execs it) must find it even where it sits under a hidden path
	// such as ~/go/bin or a build cache in /tmp.
	if exe, err := os.Executable(); err == nil && !p.Covers(exe) {
		p.Read = append(p.Read, exe)
	}
	return &proc.Sandbox{Read: p.Read, Write: p.Write, Network: p.NetworkAll, Allow: p.Allow}
}
