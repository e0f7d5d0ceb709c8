package host

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/proc"
	"github.com/switchboard-mcp/switchboard/trust"
)

// spawn starts a stdio server: no shell, its own process group, the parent
// environment (filtered for repo-authored servers, see parentEnv) plus the
// definition's env, in its cwd.
func (s *server) spawn(def config.Server) (*proc.Process, error) {
	// The configuration loader refuses such names; a server handed in
	// directly is held to the same rule here, since "K=V" as a key would
	// set a variable the approval prompt never showed.
	for k := range def.Env {
		if why := config.EnvKeyProblem(k); why != "" {
			return nil, fmt.Errorf("env: the variable name %s %s", strconv.QuoteToASCII(k), why)
		}
	}
	if IsGatewayCommand(def.Command, def.Args) {
		return nil, errors.New(selfUpstreamReason)
	}
	env := mergeEnv(mergeEnv(s.parentEnv(), def.Env), s.h.opts.ChildEnv)
	dir := def.Cwd
	if ws := s.h.workspace(); dir != "" && !filepath.IsAbs(dir) && ws != "" {
		dir = filepath.Join(ws, dir)
	}
	sb, dir, env, err := s.sandboxSpec(def, dir, env)
	if err != nil {
		return nil, err
	}
	if sb != nil {
		kept := slices.Clone(sb.ReadOnly)
		s.protected.Store(&kept)
	} else {
		s.protected.Store(nil)
	}
	dir, env, err = s.guardRunner(def, dir, env)
	if err != nil {
		return nil, err
	}
	if config.Runner(def.Command) == "npm" {
		caches := npxCachesOf(sb, env, s.runnerEnv())
		s.npxCaches.Store(&caches)
	} else {
		s.npxCaches.Store(nil)
	}
	cmd, args := proc.ResolveCommand(def.Command, def.Args)
	return proc.Start(proc.Spec{
		Command:   cmd,
		Args:      args,
		Env:       env,
		Dir:       dir,
		Supervise: !s.h.opts.NoSupervisor,
		Sandbox:   sb,
	})
}

// parentEnv is the part of the parent environment the server's processes
// (the server itself, its headersHelper) inherit: all of it for servers the
// user wrote, only the base set and the variables the approved definition
// names for project-scope ones (trust.Environ; docs/security.md,
// Environment of repo-authored servers).
func (s *server) parentEnv() []string {
	return trust.Environ(&s.cfg, s.h.opts.Environ())
}

// mergeEnv overlays extra on base (KEY=VALUE lists); extra wins.
func mergeEnv(base []string, extra map[string]string) []string {
	out := make([]string, 0, len(base)+len(extra))
	over := make(map[string]bool, len(extra))
	for k := range extra {
		over[envName(k)] = true
	}
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if over[envName(k)] {
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

// envName is the form in which two variable names are the same variable:
// Windows does not tell PATH from Path, so an overlay of "Path" must drop
// the parent's "PATH" rather than leave both for the program to pick from.
func envName(k string) string {
	if runtime.GOOS == "windows" {
		return strings.ToUpper(k)
	}
	return k
}
