package proc

import "errors"

// SandboxHelperArg is the hidden first argument that makes
// MaybeRunSupervisor run the sandbox helper: the exec helper (see
// runExecHelper), started in new namespaces, that builds the server's
// view and confines itself, then starts the server and stays as its pid
// namespace's init (Linux).
const SandboxHelperArg = "__switchboard-sandbox"

// Sandbox confines a server: what it may see of the filesystem and of the
// network. The server sees the system directories (read-only), Read
// (read-only), Write (read-write), Caches (private copies), a private
// empty /tmp, its own processes in /proc, and nothing else: every other
// path (the rest of the home directory) does not exist for it, but for the
// directories leading to those it sees. Network false gives it a network
// of its own with only a loopback interface, so every connection out fails
// at once (ECONNREFUSED or ENETUNREACH), never hangs.
//
// Whatever it says, no sandbox gets write access to /, to anything in
// /proc or /sys, or sees the host's /proc: Start fails on such a Write
// path (after links are followed), and on a Read path in /proc.
//
// Linux: the supervisor starts the server through the sandbox helper
// (SandboxHelperArg) in new user, mount, pid, IPC and (unless Network) network
// namespaces, with no setuid program and no root; the helper opens every
// path it binds once (paths below Beneath without leaving it), builds the
// view from those descriptors (a tmpfs root, pivot_root, a /proc of the
// pid namespace with /proc/sys read-only), brings loopback up, restricts
// itself with Landlock, drops every capability and sets no_new_privs,
// then starts the server as its child and stays, as the namespace's pid
// 1: it forwards the signals it gets to the server's process group, reaps,
// and when the server has exited ends what it left (SIGTERM, then, as its
// own exit empties the namespace, SIGKILL) and reports the server's exit
// status as its own. The server runs as the user. Process.Pid is then the
// helper's pid and process group, which the supervisor signals and reaps
// as any server's. A sandboxed server needs the supervisor; a kernel
// without user namespaces or Landlock refuses to start it
// (ErrSandboxUnavailable). macOS: sandbox-exec with a generated profile.
// Windows: ErrSandboxUnavailable.
type Sandbox struct {
	// Read and Write are absolute paths. A Write path that does not exist
	// is created (0700); a Read path that does not exist is left out. A
	// path may name a directory or a file.
	Read, Write []string
	// ReadOnly are paths inside Write that the server sees read-only (a
	// repository's .git, say): Linux binds each read-only over its
	// writable parent, so that it can neither be written nor replaced (a
	// mount point cannot be renamed or removed); macOS denies writes
	// below each. One that does not exist is left out.
	ReadOnly []string
	// Beneath, if set, is a directory whose contents someone else controls
	// (the workspace, which a repository fills): every path of Read and
	// Write below it, the program and the working directory included, is
	// resolved beneath it at every start, links included, and Start fails
	// if one leads out of it or names anything but a directory or a
	// regular file. What is bound is what was resolved (Linux: the helper
	// binds the descriptor it opened, so the link cannot be swapped
	// between the check and the mount). Beneath itself is taken as it is.
	Beneath string
	// Caches are package caches the server sees as private copies (see
	// Cache).
	Caches []Cache
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
	// AllowUser lists destinations of Allow that the user configured (a
	// package registry, a proxy), which are reached even when they are
	// loopback or private addresses, whatever AllowPrivate says. Metadata
	// and link-local addresses are refused all the same.
	AllowUser []string
	// Proxy is the user's own HTTP proxy, through which the destinations
	// of Allow are reached (Linux), nil for none. A destination reached
	// through it is judged first by the addresses this machine resolves
	// it to (one the user configured, by AllowUser, is not). It never
	// reaches the server (not even its sandbox helper's command line).
	Proxy *ProxyConfig
}

// Cache is a directory a package runner (npm, uv, …) keeps packages in,
// which the user's unsandboxed servers execute from: a sandboxed server
// must never write there. It sees Path with the user's contents (a warm
// cache stays warm), and what it writes goes to Private, a directory of
// its own: Linux mounts an overlay (lower Path, upper Private) in the
// server's user namespace; where that is refused (an old kernel, a
// filesystem without user extended attributes), and on macOS, the server
// gets Private alone, read-write, as a cold cache. Path need not exist;
// Private is created (0700).
type Cache struct {
	Path, Private string
}

// ErrSandboxUnavailable is wrapped by Start's error when a server must be
// sandboxed and this system cannot do it; the message says what is
// missing.
var ErrSandboxUnavailable = errors.New("the sandbox is not available")
