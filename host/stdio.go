package host

import (
	"path/filepath"
	"sort"
	"strings"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/proc"
	"github.com/switchboard-mcp/switchboard/trust"
)

// spawn starts a stdio server: no shell, its own process group, the parent
// environment (filtered for repo-authored servers, see parentEnv) plus the
// definition's env, in its cwd.
func (s *server) spawn(def config.Server) (*proc.Process, error) {
	env := mergeEnv(s.parentEnv(), def.Env)
	dir := def.Cwd
	if ws := s.h.workspace(); dir != "" && !filepath.IsAbs(dir) && ws != "" {
		dir = filepath.Join(ws, dir)
	}
	cmd, args := proc.ResolveCommand(def.Command, def.Args)
	return proc.Start(proc.Spec{
		Command:   cmd,
		Args:      args,
		Env:       env,
		Dir:       dir,
		Supervise: !s.h.opts.NoSupervisor,
	})
}

// parentEnv is the part of the parent environment the server's processes
// (the server itself, its headersHelper) inherit: all of it for servers the
// user wrote, only the base set and the variables the approved definition
// names for project-scope ones (SPEC §2, trust.Environ).
func (s *server) parentEnv() []string {
	return trust.Environ(&s.cfg, s.h.opts.Environ())
}

// mergeEnv overlays extra on base (KEY=VALUE lists); extra wins.
func mergeEnv(base []string, extra map[string]string) []string {
	out := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, over := extra[k]; over {
			continue
		}
		out = append(out, kv)
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, k+"="+extra[k])
	}
	return out
}
