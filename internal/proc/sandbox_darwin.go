package proc

import (
	"errors"
	"fmt"
	"os"
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
	ports, err := seatbeltPorts(sb)
	if err != nil {
		return "", nil, err
	}
	return sandboxExec, append([]string{"-p", seatbeltProfile(sb, ports), name}, args...), nil
}

// seatbeltPorts are the loopback ports of sb's allow-list. A profile
// names a remote TCP destination as "localhost:PORT" or "*:PORT" only, so
// another host cannot be allowed alone: such a list is refused (fail
// closed), as is a loopback one the server's policy refuses.
func seatbeltPorts(sb *Sandbox) ([]uint16, error) {
	if sb.Network || len(sb.Allow) == 0 {
		return nil, nil
	}
	allow, err := parseAllow(sb.Allow)
	if err != nil {
		return nil, fmt.Errorf("sandbox: the network allow-list: %w", err)
	}
	var ports []uint16
	for _, t := range allow {
		switch {
		case !t.loopback():
			return nil, fmt.Errorf("%w: on macOS the network allow-list may name loopback destinations only, not %s; use \"network\": true or false", ErrSandboxUnavailable, t)
		case !sb.AllowPrivate:
			return nil, fmt.Errorf("%w: %s is a loopback destination, which project-scope servers may not reach; to allow it, set \"allowPrivateNetworkForProjectServers\": true in your user settings", ErrSandboxUnavailable, t)
		}
		ports = append(ports, t.port)
	}
	return ports, nil
}

// seatbeltProfile is the sandbox-exec profile of sb, whose network is
// limited to the loopback ports given when it is not the host's.
func seatbeltProfile(sb *Sandbox, ports []uint16) string {
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
	switch {
	case sb.Network:
		b.WriteString("(allow network*)\n")
	case len(ports) > 0:
		b.WriteString("(allow network-outbound")
		for _, p := range ports {
			b.WriteString(" (remote tcp " + strconv.Quote("localhost:"+strconv.Itoa(int(p))) + ")")
		}
		b.WriteString(")\n")
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

func (*sandboxPlan) environ(env []string) []string { return env }

// netForwarder exists on Linux only (netproxy_linux.go); on macOS the
// profile itself limits the network.
type netForwarder struct{ child *os.File }

func (*netForwarder) forked(bool, func()) {}
func (*netForwarder) close()              {}
func (*supState) collectIdle()            {}

func sandboxSpawn(string) (*syscall.SysProcAttr, *netForwarder, error) {
	return nil, nil, errors.New("no sandbox helper on macOS")
}

func sandboxForkError(err error) error { return err }

func runSandboxHelper([]string) int { return 2 }
