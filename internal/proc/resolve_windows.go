package proc

import (
	"os/exec"
	"path/filepath"
	"strings"
)

// ResolveCommand returns the program and arguments to run for a configured
// command. On Windows, commands such as npx are batch files (npx.cmd) that
// CreateProcess cannot run alone, so a command that is, or resolves to, a
// .cmd or .bat file runs as "cmd /c COMMAND ARGS...". cmd.exe parses its
// command line its own way: arguments holding & | < > ^ or quotes may not
// arrive intact. Start applies it, so callers need not; it is idempotent.
func ResolveCommand(cmd string, args []string) (string, []string) {
	base := strings.ToLower(filepath.Base(cmd))
	if base == "cmd" || base == "cmd.exe" {
		return cmd, args
	}
	ext := strings.ToLower(filepath.Ext(cmd))
	if ext == "" {
		if lp, err := exec.LookPath(cmd); err == nil {
			ext = strings.ToLower(filepath.Ext(lp))
		}
	}
	if ext != ".cmd" && ext != ".bat" {
		return cmd, args
	}
	return "cmd", append([]string{"/c", cmd}, args...)
}
