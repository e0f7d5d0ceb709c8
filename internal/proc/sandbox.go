package proc

import "errors"

// SandboxHelperArg is the hidden first argument that makes
// MaybeRunSupervisor run the sandbox helper: the exec helper (see
// runExecHelper), started in new namespaces, that builds the server's
// view and confines itself before it execs the server (Linux).
const SandboxHelperArg = "__switchboard-sandbox"

// Sandbox confines a server: what it may see of the filesystem and of the
// network. The server sees the system directories (read-only), Read
// (read-only), Write (read-write), a private empty /tmp, and nothing else:
// every other path (the rest of the home directory) does not exist for it,
// but for the directories leading to those it sees. Network
// false gives it a network of its own with only a loopback interface, so
// every connection out fails at once (ECONNREFUSED or ENETUNREACH), never
// hangs.
//
// Linux: the supervisor starts the server through the sandbox helper
// (SandboxHelperArg) in new user, mount and (unless Network) network
// namespaces, with no setuid program and no root; the helper builds the
// view (a tmpfs root holding bind mounts, pivot_root), brings loopback up,
// restricts itself with Landlock (the second wall: /proc stays visible,
// and Landlock forbids reaching other processes through it), drops every
// capability, sets no_new_privs and execs the server, which runs as the
// user, in its own process group under the supervisor like any other
// (its pid is the host's pid; no pid namespace). A sandboxed server needs
// the supervisor; a kernel without user namespaces or Landlock refuses to
// start it (ErrSandboxUnavailable). macOS: sandbox-exec with a generated
// profile. Windows: ErrSandboxUnavailable.
type Sandbox struct {
	// Read and Write are absolute paths. A Write path that does not exist
	// is created (0700); a Read path that does not exist is left out.
	Read, Write []string
	// Network shares the host's network; false confines the server to a
	// network of its own, loopback only.
	Network bool
	// Allow lists "host:port" the server may connect to although Network
	// is false (an address, "[v6]:port", or a name the supervisor
	// resolves). Linux: the server keeps its network of its own, and the
	// supervisor, outside it, relays to these alone: through an HTTP proxy
	// inside (CONNECT, or an absolute http:// request; the server's
	// HTTP_PROXY, HTTPS_PROXY and ALL_PROXY name it, NO_PROXY sends
	// loopback direct), and, for a listed loopback destination, through a
	// listener at that same address inside. Anything else is refused: 403
	// from the proxy, ECONNREFUSED or ENETUNREACH direct. macOS: loopback
	// destinations only (a profile cannot name other hosts); another
	// makes Start fail.
	Allow []string
	// AllowPrivate lets Allow's destinations be loopback, private and
	// reserved addresses (internal/netguard's rules): a server the user
	// wrote, or the user's settings allow it. Metadata and link-local
	// addresses are refused whatever it says; so are private ones without
	// it (the zero value), as for a project-scope server's URL.
	AllowPrivate bool
}

// ErrSandboxUnavailable is wrapped by Start's error when a server must be
// sandboxed and this system cannot do it; the message says what is
// missing.
var ErrSandboxUnavailable = errors.New("the sandbox is not available")
