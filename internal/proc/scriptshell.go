package proc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// npm (npx, npm exec) decides what it runs from the directory it starts
// in: a package installed in node_modules there or in any parent wins over
// the one asked for, a .npmrc there names the registry, and every
// node_modules/.bin on the way up is put before PATH, so that one holding
// `node` or `sh` replaces those too. A repository can ship all of them. So a
// server the user wrote starts npm in a directory no repository controls
// (NeutralDir), and this program, set as npm's script shell, moves the
// package's program into the directory the server was meant to start in.
// npm runs what it executes through the script shell ($npm_config_script_shell
// -c COMMAND) with the package's bin folder first on PATH; the shell here
// changes into the server's directory when npm runs the package
// (npm_lifecycle_event=npx; an install script runs where npm put it), gives
// back the user's own script shell, and executes the real shell.
const (
	// scriptShellDirEnv holds the directory to change into; its presence
	// makes MaybeRunSupervisor act as the script shell.
	scriptShellDirEnv = "SWITCHBOARD_SCRIPT_SHELL_DIR"
	// scriptShellPrevEnv holds the user's own npm_config_script_shell
	// ("" when there was none), restored before the shell runs.
	scriptShellPrevEnv = "SWITCHBOARD_SCRIPT_SHELL_PREV"
	npmScriptShellEnv  = "npm_config_script_shell"
)

// NeutralDir is where a package runner starts when the directory its
// server starts in may hold a repository's files: the file system's root,
// which only the administrator writes and under which npm finds no
// project.
func NeutralDir() string {
	if runtime.GOOS == "windows" {
		return filepath.VolumeName(os.Getenv("SystemRoot")) + `\`
	}
	return "/"
}

// NpmScriptShell returns the environment (env with three variables set)
// that makes npm, started in NeutralDir, run the package's program in dir
// with the user's own script shell. ok is false where this program cannot
// be that shell: MaybeRunSupervisor was never called (an embedder's main
// that does not call it would run as something else), its path is unknown,
// or on Windows, where npm's shell is cmd.exe.
func NpmScriptShell(dir string, env []string) (out []string, ok bool) {
	if !hooked.Load() || runtime.GOOS == "windows" {
		return nil, false
	}
	exe, err := os.Executable()
	if err != nil || !filepath.IsAbs(exe) {
		return nil, false
	}
	prev := ""
	out = make([]string, 0, len(env)+3)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case strings.EqualFold(k, npmScriptShellEnv):
			prev = v
			continue
		case k == scriptShellDirEnv, k == scriptShellPrevEnv:
			continue
		}
		out = append(out, kv)
	}
	return append(out, npmScriptShellEnv+"="+exe, scriptShellDirEnv+"="+dir, scriptShellPrevEnv+"="+prev), true
}

// maybeRunScriptShell runs this process as npm's script shell when
// NpmScriptShell's variables say so, and does not return then.
func maybeRunScriptShell() {
	dir, ok := os.LookupEnv(scriptShellDirEnv)
	if !ok {
		return
	}
	prev := os.Getenv(scriptShellPrevEnv)
	os.Unsetenv(scriptShellDirEnv)
	os.Unsetenv(scriptShellPrevEnv)
	// What the server starts (npm again, say) gets the user's own shell.
	shell := "sh"
	if prev != "" {
		shell = prev
		os.Setenv(npmScriptShellEnv, prev)
	} else {
		os.Unsetenv(npmScriptShellEnv)
	}
	if os.Getenv("npm_lifecycle_event") == "npx" {
		if err := os.Chdir(dir); err != nil {
			fmt.Fprintf(os.Stderr, "switchboard: cannot start the server in %s: %v\n", dir, err)
			os.Exit(127)
		}
		os.Setenv("PWD", dir)
	}
	path, err := exec.LookPath(shell)
	if err != nil && shell == "sh" {
		path, err = "/bin/sh", nil
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "switchboard: npm's script shell %s: %v\n", shell, err)
		os.Exit(127)
	}
	os.Exit(execShell(path, append([]string{shell}, os.Args[1:]...), os.Environ()))
}
