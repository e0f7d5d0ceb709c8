//go:build unix

package proc

import (
	"fmt"
	"os"
	"syscall"
)

// execShell replaces this process with the shell; it returns only on
// failure.
func execShell(path string, argv, env []string) int {
	err := syscall.Exec(path, argv, env)
	fmt.Fprintf(os.Stderr, "switchboard: running %s: %v\n", path, err)
	return 127
}
