package proc

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// sandboxExec is macOS's Seatbelt front end. Apple marks it deprecated,
// but it is what every sandboxing tool there still uses (it ships with
// every release).
const sandboxExec = "/usr/bin/sandbox-exec"

// sandboxCommand runs the server under sandbox-exec with a profile made
// from sb: reads of the system, Read and Write; writes to Write and the
// temporary directories; no network unless shared. Unlike Linux, paths
// outside are not invisible but refused (EPERM), and /tmp is the system's.
func sandboxCommand(sb *Sandbox, name string, args []string, supervised bool) (string, []string, error) {
	if len(sb.Allow) > 0 && !sb.Network {
		return "", nil, fmt.Errorf("%w: a network allow-list (%s) is not enforced yet; use \"network\": false or true", ErrSandboxUnavailable, strings.Join(sb.Allow, ", "))
	}
	return sandboxExec, append([]string{"-p", seatbeltProfile(sb), name}, args...), nil
}

// seatbeltProfile is the sandbox-exec profile of sb.
func seatbeltProfile(sb *Sandbox) string {
	var b strings.Builder
	b.WriteString("(version 1)\n(deny default)\n")
	b.WriteString("(allow process-exec process-fork signal (target same-sandbox))\n")
	b.WriteString("(allow sysctl-read mach-lookup ipc-posix-shm iokit-open)\n")
	b.WriteString("(allow file-read-metadata)\n")
	b.WriteString("(allow file-read*")
	for _, d := range []string{"/usr", "/bin", "/sbin", "/System", "/Library", "/Applications", "/opt/homebrew", "/usr/local", "/private/etc", "/dev", "/private/var/db/timezone"} {
		b.WriteString(" (subpath " + strconv.Quote(d) + ")")
	}
	for _, p := range append(append([]string(nil), sb.Read...), sb.Write...) {
		b.WriteString(" (subpath " + strconv.Quote(filepath.Clean(p)) + ")")
	}
	b.WriteString(")\n(allow file-write* (literal \"/dev/null\") (subpath \"/private/tmp\") (subpath \"/private/var/folders\")")
	for _, p := range sb.Write {
		b.WriteString(" (subpath " + strconv.Quote(filepath.Clean(p)) + ")")
	}
	b.WriteString(")\n")
	if sb.Network {
		b.WriteString("(allow network*)\n")
	}
	return b.String()
}

// sandboxRequest: the profile is in the command line already.
func sandboxRequest(*Sandbox, *spawnReq) error { return nil }

// SandboxSupport says whether this system can start a sandboxed server.
func SandboxSupport() string { return "" }

// sandboxPlan exists on Linux only; the supervisor never gets one here.
type sandboxPlan struct{}

func (*sandboxPlan) build() error   { return errors.New("no sandbox helper on macOS") }
func (*sandboxPlan) confine() error { return errors.New("no sandbox helper on macOS") }

func sandboxEnv(env []string) []string { return env }

func sandboxSpawn(string) (*syscall.SysProcAttr, error) {
	return nil, errors.New("no sandbox helper on macOS")
}

func sandboxForkError(err error) error { return err }

func runSandboxHelper([]string) int { return 2 }
