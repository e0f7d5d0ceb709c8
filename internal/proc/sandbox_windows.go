package proc

import "fmt"

// Windows has no sandbox here: a server that must be sandboxed does not
// start (the user may opt it out, see docs/security.md).
func sandboxCommand(*Sandbox, string, []string, bool) (string, []string, error) {
	return "", nil, fmt.Errorf("%w: Windows is not supported", ErrSandboxUnavailable)
}

func sandboxRequest(*Sandbox, *spawnReq) error { return nil }

// SandboxSupport says whether this system can start a sandboxed server.
func SandboxSupport() string { return "sandboxing is not supported on Windows" }

// SharedNetworkReachesAbstractSockets: there is no sandbox here.
func SharedNetworkReachesAbstractSockets() bool { return false }

func runSandboxHelper([]string) int { return 2 }

// SystemDirs: none, as no sandbox runs here.
func SystemDirs() []string { return nil }
