package host

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/proc"
	"github.com/switchboard-mcp/switchboard/internal/samepath"
)

// errRepoDecides is wrapped by the error of a server the user wrote that
// is not started because a file of the repository would decide what it
// runs (see guardRunner).
var errRepoDecides = errors.New("the repository would decide what it runs")

// guardRunner keeps a repository's files from changing what a server the
// user wrote executes (docs/security.md, "What a repository can and cannot
// do"). dir is the directory spawn would start it in ("" is the host's),
// env its environment; it returns the directory and environment to start
// it with, or an error wrapping errRepoDecides that says which file and
// how to run it instead.
//
// It applies to user-trusted servers (every scope but project: the
// repository's own servers run its code anyway, once approved) that start
// in the workspace or below it: given no cwd while the host runs there, or
// given a cwd there. Elsewhere (a cwd outside the workspace, the host run
// outside any) the directory is the user's, and is left as it is.
//
//   - npx and npm exec start in proc.NeutralDir, with this program as npm's
//     script shell moving the package's program into dir, so that a
//     node_modules, .npmrc or node_modules/.bin/node of the repository (or
//     of any folder above dir) is never used, while "." in the server's
//     arguments still means dir.
//   - python -m gets PYTHONSAFEPATH=1 (Python 3.11 and later), so that a
//     module of that name in dir does not replace the installed one.
//   - Runners that cannot be moved that way (bunx, pnpm dlx, yarn dlx, uv
//     run) are not started while a file that steers them lies in dir or
//     above it within the workspace.
//   - A user- or managed-scope server (written for every workspace) whose
//     program or script is a relative path to a file in the workspace is
//     not started: that file is the repository's code. A local-scope
//     server, written for this workspace, runs its files as written.
func (s *server) guardRunner(def config.Server, dir string, env []string) (string, []string, error) {
	if s.cfg.Trust != config.TrustUser {
		return dir, env, nil
	}
	start := dir
	if start == "" {
		start, _ = os.Getwd()
	}
	if start == "" {
		return dir, env, nil
	}
	ws := s.h.workspace()
	if ws == "" || !samepath.Within(start, ws) {
		return dir, env, nil
	}
	if s.cfg.Scope == config.ScopeUser || s.cfg.Scope == config.ScopeManaged {
		if f := repoProgram(def, start); f != "" {
			return "", nil, fmt.Errorf("%w: %s is a file of the repository (%s); a %s-scope server runs in every workspace, so it runs only what you wrote (fix: give its absolute path, or a \"cwd\" outside the repository)",
				errRepoDecides, f, filepath.Join(start, f), s.cfg.Scope)
		}
	}
	runner, rest := runnerOf(def.Command, def.Args)
	switch runner {
	case "npm":
		if spec := localSpec(rest); spec != "" {
			// npx ./pkg runs a folder by its path: the path is what the
			// user wrote, resolved where the server starts, as a script's
			// is (above); moving npm would resolve it elsewhere.
			if s.cfg.Scope == config.ScopeUser || s.cfg.Scope == config.ScopeManaged {
				return "", nil, fmt.Errorf("%w: npx runs %s, a folder of the repository; a %s-scope server runs in every workspace, so it runs only what you wrote (fix: give its absolute path, or a \"cwd\" outside the repository)",
					errRepoDecides, spec, s.cfg.Scope)
			}
			return dir, env, nil
		}
		if out, ok := proc.NpmScriptShell(start, env); ok {
			return proc.NeutralDir(), out, nil
		}
		if f := steering(start, ws, runnerFiles[runner]); f != "" {
			return "", nil, heldFor(f, def.Command, "this program cannot move npm out of it here (its main does not call host.MaybeRunSupervisor, or on Windows)")
		}
	case "python":
		if slices.Contains(rest, "-m") && !hasEnv(env, "PYTHONSAFEPATH") {
			env = append(slices.Clone(env), "PYTHONSAFEPATH=1")
		}
	case "":
	default:
		if !(runner == "uv" && projectGiven(rest)) {
			if f := steering(start, ws, runnerFiles[runner]); f != "" {
				return "", nil, heldFor(f, def.Command, "it cannot be told to ignore it")
			}
		}
	}
	return dir, env, nil
}

// heldFor is the error of a runner held because of the repository's file f.
func heldFor(f, command, why string) error {
	return fmt.Errorf("%w: %s reads %s, a file of the repository, to choose the package it runs, and %s (fix: give the server a \"cwd\" outside the repository, or start it with npx, which Switchboard keeps out of the repository)",
		errRepoDecides, config.ProgramName(command), f, why)
}

// runnerFiles are the files in a directory or its parents that steer each
// runner: which package it runs, from which registry, with which
// interpreter. npm's are only consulted where npm cannot be moved.
var runnerFiles = map[string][]string{
	"npm":  {"node_modules", ".npmrc"},
	"bun":  {"node_modules", "bunfig.toml", ".npmrc"},
	"pnpm": {"node_modules", ".npmrc", "pnpm-workspace.yaml", "package.json"},
	"yarn": {"node_modules", ".yarnrc.yml", ".yarnrc", ".npmrc", ".pnp.cjs", "package.json"},
	"uv":   {"pyproject.toml", "uv.toml", ".python-version", ".venv"},
}

// steering returns the first of names found in dir or a parent of it up to
// workspace ws (relative to ws), or "".
func steering(dir, ws string, names []string) string {
	for d := filepath.Clean(dir); samepath.Within(d, ws); d = filepath.Dir(d) {
		for _, n := range names {
			if _, err := os.Lstat(filepath.Join(d, n)); err == nil {
				if rel, err := filepath.Rel(ws, filepath.Join(d, n)); err == nil {
					return rel
				}
				return filepath.Join(d, n)
			}
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return ""
}

// runnerOf names the package runner command (with args) is, "" for none,
// and the arguments after the runner's own subcommand: "npm" for npx and
// npm exec, "bun" for bunx and bun x, "pnpm" for pnpx, pnpm dlx and pnpm
// exec, "yarn" for yarn dlx, "uv" for uv run, "python" for a Python
// interpreter.
func runnerOf(command string, args []string) (string, []string) {
	base := config.ProgramName(command)
	sub := func(names ...string) bool { return len(args) > 0 && slices.Contains(names, args[0]) }
	switch {
	case base == "npx":
		return "npm", args
	case base == "npm" && sub("exec", "x"):
		return "npm", args[1:]
	case base == "bunx", base == "bun" && sub("x"):
		return "bun", args
	case base == "pnpx", base == "pnpm" && sub("dlx", "exec"):
		return "pnpm", args
	case base == "yarn" && sub("dlx"):
		return "yarn", args
	case base == "uv" && sub("run"):
		return "uv", args[1:]
	case isPython(base):
		return "python", args
	}
	return "", args
}

// isPython reports whether base names a Python interpreter: python,
// python3, python3.12, pypy3….
func isPython(base string) bool {
	for _, p := range []string{"python", "pypy"} {
		if v, ok := strings.CutPrefix(base, p); ok && strings.Trim(v, "0123456789.") == "" {
			return true
		}
	}
	return false
}

// projectGiven reports whether uv run's arguments name the project or
// directory by an absolute path, which is then what steers it.
func projectGiven(args []string) bool {
	for i, a := range args {
		for _, f := range []string{"--directory", "--project"} {
			if v, ok := strings.CutPrefix(a, f+"="); ok && filepath.IsAbs(v) {
				return true
			}
			if a == f && i+1 < len(args) && filepath.IsAbs(args[i+1]) {
				return true
			}
		}
		if a == "--no-project" || a == "--isolated" {
			return true
		}
	}
	return false
}

// interpreters run the script their first argument names.
var interpreters = []string{"node", "nodejs", "bun", "deno", "tsx", "ts-node", "ruby", "perl", "php", "sh", "bash", "dash", "zsh", "fish"}

// repoProgram returns the program or script def runs, as written, when it
// is a relative path to a file that exists in dir: the repository's code.
// Flags are skipped (a flag's value that is a file in dir counts too: node
// --require ./hook.js loads it); a module name or URL is not a path.
func repoProgram(def config.Server, dir string) string {
	isFile := func(p string) bool {
		if p == "" || filepath.IsAbs(p) || strings.HasPrefix(p, "~") || strings.Contains(p, "://") {
			return false
		}
		fi, err := os.Stat(filepath.Join(dir, p))
		return err == nil && !fi.IsDir()
	}
	if strings.ContainsAny(def.Command, `/\`) && isFile(def.Command) {
		return def.Command
	}
	base := config.ProgramName(def.Command)
	if !isPython(base) && !slices.Contains(interpreters, base) {
		return ""
	}
	for _, a := range def.Args {
		if isFile(a) {
			return a
		}
		if (base == "deno" || base == "bun") && a == "run" {
			continue
		}
		if !strings.HasPrefix(a, "-") {
			break // the script (or a subcommand such as deno run): what follows is its own
		}
		if isPython(base) && (a == "-m" || a == "-c") {
			break
		}
	}
	return ""
}

// localSpec returns the package npm's arguments name by a relative path
// (., ./dir, ../dir, file:dir), or "": the value of --package or -p, or the
// first argument that is not an option (what follows it is the command's
// own, such as server-filesystem's ".").
func localSpec(args []string) string {
	local := func(a string) bool {
		return a == "." || a == ".." || strings.HasPrefix(a, "./") || strings.HasPrefix(a, "../") ||
			(strings.HasPrefix(a, "file:") && !filepath.IsAbs(strings.TrimPrefix(a, "file:")))
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case strings.HasPrefix(a, "--package="):
			if v := strings.TrimPrefix(a, "--package="); local(v) {
				return v
			}
			continue
		case (a == "-p" || a == "--package") && i+1 < len(args):
			if i++; local(args[i]) {
				return args[i]
			}
			continue
		case a == "--":
			if i+1 < len(args) && local(args[i+1]) {
				return args[i+1]
			}
			return ""
		case strings.HasPrefix(a, "-"):
			continue
		}
		if local(a) {
			return a
		}
		return ""
	}
	return ""
}

// hasEnv reports whether env sets k.
func hasEnv(env []string, k string) bool {
	for _, kv := range env {
		if n, _, _ := strings.Cut(kv, "="); envName(n) == envName(k) {
			return true
		}
	}
	return false
}
