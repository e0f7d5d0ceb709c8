package proc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
	sb, err := profilePaths(sb)
	if err != nil {
		return "", nil, err
	}
	ports, err := seatbeltPorts(sb)
	if err != nil {
		return "", nil, err
	}
	return sandboxExec, append([]string{"-p", seatbeltProfile(sb, ports), name}, args...), nil
}

// profilePaths is sb with its paths as the profile names them: each below
// Beneath resolved beneath it (a profile names paths, so unlike Linux a
// link swapped after this look is followed: docs/security.md says so),
// none the sandbox refuses, and each cache's user directory read-only and
// its private copy read-write (a cold cache: no overlay here; the host
// points the runner at the private copy).
func profilePaths(in *Sandbox) (*Sandbox, error) {
	sb := *in
	sb.Read, sb.Write = nil, nil
	beneath := filepath.Clean(in.Beneath)
	resolve := func(p string, write bool) (string, error) {
		p = filepath.Clean(p)
		r := p
		if in.Beneath != "" && p != beneath && under(p, []string{beneath}) {
			var err error
			if write {
				r, _, err = mkdirBeneath(beneath, p)
			} else {
				r, _, err = ResolveBeneath(beneath, p)
			}
			if err != nil {
				return "", fmt.Errorf("sandbox: %w", err)
			}
		} else if e, err := filepath.EvalSymlinks(p); err == nil {
			r = e
		}
		if why := SandboxPathRefused(r, write); why != "" {
			return "", fmt.Errorf("sandbox: %s: %s", p, why)
		}
		return r, nil
	}
	for _, w := range in.Write {
		r, err := resolve(w, true)
		if err != nil {
			return nil, err
		}
		sb.Write = append(sb.Write, r)
	}
	// Read's and ReadOnly's paths that exist, as the profile names them.
	existing := func(paths []string) ([]string, error) {
		var out []string
		for _, p := range paths {
			r, err := resolve(p, false)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		return out, nil
	}
	var err error
	if sb.Read, err = existing(in.Read); err != nil {
		return nil, err
	}
	if sb.ReadOnly, err = existing(in.ReadOnly); err != nil {
		return nil, err
	}
	for _, c := range in.Caches {
		if err := os.MkdirAll(c.Private, 0o700); err != nil {
			return nil, fmt.Errorf("sandbox: the private copy of %s: %w", c.Path, err)
		}
		sb.Read = append(sb.Read, c.Path)
		sb.Write = append(sb.Write, c.Private)
	}
	return &sb, nil
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
		case !sb.AllowPrivate && !slices.Contains(sb.AllowUser, t.String()):
			return nil, fmt.Errorf("%w: %s is a loopback destination, which project-scope servers may not reach; to allow it, set \"allowPrivateNetworkForProjectServers\": true in your user settings", ErrSandboxUnavailable, t)
		}
		ports = append(ports, t.port)
	}
	return ports, nil
}

// seatbeltSystemDirs are what every profile lets a server read.
var seatbeltSystemDirs = []string{"/usr", "/bin", "/sbin", "/System", "/Library", "/Applications", "/opt/homebrew", "/usr/local", "/private/etc", "/dev", "/private/var/db/timezone"}

// seatbeltProfile is the sandbox-exec profile of sb, whose network is
// limited to the loopback ports given when it is not the host's.
func seatbeltProfile(sb *Sandbox, ports []uint16) string {
	var b strings.Builder
	b.WriteString("(version 1)\n(deny default)\n")
	b.WriteString("(allow process-exec process-fork signal (target same-sandbox))\n")
	b.WriteString("(allow sysctl-read mach-lookup ipc-posix-shm iokit-open)\n")
	b.WriteString("(allow file-read-metadata)\n")
	b.WriteString("(allow file-read*")
	for _, d := range seatbeltSystemDirs {
		b.WriteString(" (subpath " + strconv.Quote(d) + ")")
	}
	for _, p := range append(append([]string(nil), sb.Read...), sb.Write...) {
		b.WriteString(" (subpath " + strconv.Quote(filepath.Clean(p)) + ")")
	}
	b.WriteString(")\n(allow file-write* (literal \"/dev/null\") (subpath \"/private/tmp\") (subpath \"/private/var/folders\"))\n")
	if len(sb.Write) > 0 {
		// What is kept read-only inside a writable path is left out of the
		// rule itself, whatever the order of rules says.
		b.WriteString("(allow file-write* (require-all (require-any")
		for _, p := range sb.Write {
			b.WriteString(" (subpath " + strconv.Quote(filepath.Clean(p)) + ")")
		}
		b.WriteString(")")
		for _, p := range sb.ReadOnly {
			b.WriteString(" (require-not (subpath " + strconv.Quote(filepath.Clean(p)) + "))")
		}
		b.WriteString("))\n")
	}
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

// SharedNetworkReachesAbstractSockets: macOS has no abstract sockets.
func SharedNetworkReachesAbstractSockets() bool { return false }

// SystemDirs are the directories every sandboxed server may read.
func SystemDirs() []string { return slices.Clone(seatbeltSystemDirs) }

// sandboxPlan exists on Linux only; the supervisor never gets one here.
type sandboxPlan struct{}

func (*sandboxPlan) build([]string) error { return errors.New("no sandbox helper on macOS") }
func (*sandboxPlan) confine() error       { return errors.New("no sandbox helper on macOS") }
func (*sandboxPlan) serve(string, []string, []string) int {
	return 127
}

func (*sandboxPlan) environ(env []string) []string { return env }

// netForwarder exists on Linux only (netproxy_linux.go); on macOS the
// profile itself limits the network.
type netForwarder struct{ child *os.File }

func (*netForwarder) forked(bool, func()) {}
func (*netForwarder) close()              {}
func (*supState) collectIdle()            {}

func sandboxSpawn(string) (*syscall.SysProcAttr, string, *netForwarder, error) {
	return nil, "", nil, errors.New("no sandbox helper on macOS")
}

func sandboxForkError(err error) error { return err }

func runSandboxHelper([]string) int { return 2 }
