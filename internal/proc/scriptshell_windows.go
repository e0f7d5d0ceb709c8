package proc

import (
	"fmt"
	"os"
)

// execShell is never reached on Windows: NpmScriptShell does not offer
// this program as npm's shell there.
func execShell(path string, _, _ []string) int {
	fmt.Fprintf(os.Stderr, "switchboard: not npm's script shell on Windows (%s)\n", path)
	return 127
}
