package proc

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// systemDirs are shown read-only to every sandboxed server: what programs
// and their interpreters are made of. A symbolic link among them (/bin on
// a merged /usr) is recreated as one.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix/store"}

// SystemDirs are the directories every sandboxed server sees read-only.
func SystemDirs() []string { return slices.Clone(systemDirs) }

// devFiles are the devices a sandboxed server may open.
var devFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// mountKind says what a sandbox mount puts at its target.
type mountKind string

const (
	mountRO      mountKind = "ro"      // a read-only bind of Source
	mountRW      mountKind = "rw"      // a read-write bind of Source
	mountDev     mountKind = "dev"     // a read-write bind of a device file
	mountTmpfs   mountKind = "tmpfs"   // a private, empty, writable directory
	mountSymlink mountKind = "symlink" // a symbolic link to Source
	mountEmpty   mountKind = "empty"   // an empty, read-only directory
	mountProc    mountKind = "proc"    // the pid namespace's own /proc, /proc/sys read-only
	mountCache   mountKind = "cache"   // a private copy of the package cache Source (see Cache)
)

type sandboxMount struct {
	Kind   mountKind `json:"kind"`
	Target string    `json:"target"`
	Source string    `json:"source,omitempty"`
	File   bool      `json:"file,omitempty"` // Source is not a directory
	// Beneath: Source is below this directory, and the helper opens it
	// without leaving it (see Sandbox.Beneath).
	Beneath string `json:"beneath,omitempty"`
	// Private is a cache's directory of private copies (mountCache).
	Private string `json:"private,omitempty"`

	fd      int  // the helper's: Source opened (O_PATH), or the mount made for a cache; 0 none
	overlay bool // the helper's: fd is a cache's overlay, ready to attach
}

// sandboxPlan is what the sandbox helper builds, decided by the host
// (which looks at the paths) and carried in the spawn request.
type sandboxPlan struct {
	Mounts  []sandboxMount `json:"mounts"`
	Network bool           `json:"network,omitempty"` // the host's; else a namespace of its own
	UID     int            `json:"uid"`
	GID     int            `json:"gid"`
	// Allow lists the destinations (canonical "host:port") the forwarder
	// relays to from a namespace of its own; AllowPrivate lets those be
	// loopback and private addresses, AllowUser those it lists (see
	// Sandbox).
	Allow        []string `json:"allow,omitempty"`
	AllowPrivate bool     `json:"allowPrivate,omitempty"`
	AllowUser    []string `json:"allowUser,omitempty"`
	// Proxy is the supervisor's (see Sandbox.Proxy): taken out of the
	// plan the helper gets.
	Proxy *ProxyConfig `json:"proxy,omitempty"`

	proxyPort uint16 // the helper's: the proxy's port in the namespace, once open
}

// sandboxUnavailable says why this kernel cannot sandbox, or "".
func sandboxUnavailable() string {
	if b, err := os.ReadFile("/proc/sys/user/max_user_namespaces"); err == nil && strings.TrimSpace(string(b)) == "0" {
		return "user namespaces are disabled (/proc/sys/user/max_user_namespaces is 0)"
	}
	if os.Geteuid() != 0 {
		if b, err := os.ReadFile("/proc/sys/kernel/unprivileged_userns_clone"); err == nil && strings.TrimSpace(string(b)) == "0" {
			return "unprivileged user namespaces are disabled (/proc/sys/kernel/unprivileged_userns_clone is 0)"
		}
		if b, err := os.ReadFile("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"); err == nil && strings.TrimSpace(string(b)) == "1" {
			return "AppArmor forbids unprivileged user namespaces (/proc/sys/kernel/apparmor_restrict_unprivileged_userns is 1)"
		}
	}
	if v, err := llsys.LandlockGetABIVersion(); err != nil || v < 1 {
		return fmt.Sprintf("the kernel has no Landlock (%v; it needs Linux 5.13 or later with landlock in the lsm= list)", err)
	}
	if b, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		if at := procCovered(string(b)); at != "" {
			return "parts of /proc are covered by other mounts (" + at + ", as in some containers), so the kernel allows no /proc of the sandbox's own, which hides your other processes"
		}
	}
	return ""
}

// procCovered names a mount over part of /proc in mountinfo, "" if none:
// with one, the kernel refuses a new proc mount in a user namespace. The
// empty binfmt_misc directory does not count (nor does it for the kernel).
func procCovered(mountinfo string) string {
	for _, l := range strings.Split(mountinfo, "\n") {
		f := strings.Fields(l)
		if len(f) > 4 && strings.HasPrefix(f[4], "/proc/") && f[4] != "/proc/sys/fs/binfmt_misc" {
			return f[4]
		}
	}
	return ""
}

// SandboxSupport says whether this system can start a sandboxed server:
// "" if it can, else what is missing.
func SandboxSupport() string { return sandboxUnavailable() }

// SharedNetworkReachesAbstractSockets reports whether a sandboxed server
// with the host's network (Sandbox.Network) can connect to the abstract
// Unix sockets of the user's other processes (an X server's
// @/tmp/.X11-unix/X0, a D-Bus bus at unix:abstract=): they belong to the
// network namespace, and only Landlock ABI 6 (Linux 6.12) scopes them.
func SharedNetworkReachesAbstractSockets() bool {
	v, err := llsys.LandlockGetABIVersion()
	return err == nil && v < 6
}

// planSandbox decides the sandbox of a server whose program is prog (an
// absolute path) and working directory dir.
func planSandbox(sb *Sandbox, prog, dir string) (*sandboxPlan, error) {
	if why := sandboxUnavailable(); why != "" {
		return nil, fmt.Errorf("%w: %s", ErrSandboxUnavailable, why)
	}
	p := &sandboxPlan{Network: sb.Network, UID: os.Getuid(), GID: os.Getgid()}
	if !sb.Network && len(sb.Allow) > 0 {
		allow, err := parseAllow(sb.Allow)
		if err != nil {
			return nil, fmt.Errorf("sandbox: the network allow-list: %w", err)
		}
		for _, t := range allow {
			if !slices.Contains(p.Allow, t.String()) {
				p.Allow = append(p.Allow, t.String())
			}
		}
		p.AllowPrivate = sb.AllowPrivate
		p.Proxy = sb.Proxy
		user, err := parseAllow(sb.AllowUser)
		if err != nil {
			return nil, fmt.Errorf("sandbox: the user's destinations: %w", err)
		}
		for _, t := range user {
			if slices.Contains(p.Allow, t.String()) && !slices.Contains(p.AllowUser, t.String()) {
				p.AllowUser = append(p.AllowUser, t.String())
			}
		}
	}
	beneath := ""
	if sb.Beneath != "" {
		if !filepath.IsAbs(sb.Beneath) {
			return nil, fmt.Errorf("sandbox: %q is not an absolute path", sb.Beneath)
		}
		beneath = filepath.Clean(sb.Beneath)
	}
	// below reports a path to resolve beneath (the directory itself is
	// taken as it is).
	below := func(path string) bool { return beneath != "" && path != beneath && under(path, []string{beneath}) }
	var targets []string // directories bound so far
	add := func(m sandboxMount) { p.Mounts = append(p.Mounts, m) }
	bind := func(kind mountKind, path string) error {
		path = filepath.Clean(path)
		m := sandboxMount{Kind: kind, Target: path}
		if why := SandboxPathRefused(path, kind == mountRW); why != "" {
			return fmt.Errorf("%s: %s", path, why)
		}
		var src string
		var fi os.FileInfo
		var err error
		if below(path) {
			if kind == mountRW {
				src, fi, err = mkdirBeneath(beneath, path)
			} else {
				src, fi, err = ResolveBeneath(beneath, path)
			}
			m.Source, m.Beneath = path, beneath
		} else {
			if src, err = filepath.EvalSymlinks(path); err == nil {
				fi, err = os.Stat(src)
			}
			m.Source = src
		}
		if err != nil {
			return err
		}
		if why := SandboxPathRefused(src, kind == mountRW); why != "" {
			return fmt.Errorf("%s: %s", describeResolved(path, src), why)
		}
		m.File = !fi.IsDir()
		add(m)
		if fi.IsDir() {
			targets = append(targets, path)
		}
		return nil
	}
	for _, d := range systemDirs {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if l, err := os.Readlink(d); err == nil {
				add(sandboxMount{Kind: mountSymlink, Target: d, Source: l})
			}
		case fi.IsDir():
			bind(mountRO, d)
		}
	}
	add(sandboxMount{Kind: mountTmpfs, Target: "/tmp"})
	add(sandboxMount{Kind: mountTmpfs, Target: "/dev"})
	add(sandboxMount{Kind: mountTmpfs, Target: "/dev/shm"})
	for _, d := range devFiles {
		if _, err := os.Stat(d); err == nil {
			add(sandboxMount{Kind: mountDev, Target: d, Source: d, File: true})
		}
	}
	for _, l := range [][2]string{{"/dev/fd", "/proc/self/fd"}, {"/dev/stdin", "/proc/self/fd/0"}, {"/dev/stdout", "/proc/self/fd/1"}, {"/dev/stderr", "/proc/self/fd/2"}} {
		add(sandboxMount{Kind: mountSymlink, Target: l[0], Source: l[1]})
	}
	add(sandboxMount{Kind: mountProc, Target: "/proc"})
	for _, w := range sb.Write {
		if !filepath.IsAbs(w) {
			return nil, fmt.Errorf("sandbox: %q is not an absolute path", w)
		}
		if !below(filepath.Clean(w)) {
			if _, err := os.Stat(w); errors.Is(err, os.ErrNotExist) {
				if err := os.MkdirAll(w, 0o700); err != nil {
					return nil, fmt.Errorf("sandbox: creating %s: %w", w, err)
				}
			}
		}
		if err := bind(mountRW, w); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
	}
	// ReadOnly's paths lie inside Write's: bound read-only as Read's are,
	// after them and deeper, so on top (the sort below).
	for _, r := range append(slices.Clone(sb.Read), sb.ReadOnly...) {
		if !filepath.IsAbs(r) {
			return nil, fmt.Errorf("sandbox: %q is not an absolute path", r)
		}
		if err := bind(mountRO, r); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
	}
	for _, c := range sb.Caches {
		if !filepath.IsAbs(c.Path) || !filepath.IsAbs(c.Private) {
			return nil, fmt.Errorf("sandbox: the cache %q (private copy %q) is not an absolute path", c.Path, c.Private)
		}
		if err := os.MkdirAll(c.Private, 0o700); err != nil {
			return nil, fmt.Errorf("sandbox: the private copy of %s: %w", c.Path, err)
		}
		m := sandboxMount{Kind: mountCache, Target: filepath.Clean(c.Path), Private: filepath.Clean(c.Private)}
		if src, err := filepath.EvalSymlinks(c.Path); err == nil {
			if fi, err := os.Stat(src); err == nil && fi.IsDir() {
				m.Source = src // the lower layer; without one the private copy alone
			}
		}
		if why := SandboxPathRefused(m.Target, true); why != "" {
			return nil, fmt.Errorf("sandbox: the cache %s: %s", c.Path, why)
		}
		add(m)
		targets = append(targets, m.Target)
	}
	// The program itself, when nothing else shows it: the approved
	// definition names it, so it may be run.
	if filepath.IsAbs(prog) && !under(prog, targets) {
		if err := bind(mountRO, prog); err != nil {
			return nil, fmt.Errorf("sandbox: the program: %w", err)
		}
	}
	// The working directory is looked up in the view, where a link can
	// lead nowhere else; one beneath must not lead out all the same.
	if dir != "" && below(filepath.Clean(dir)) {
		if _, _, err := ResolveBeneath(beneath, dir); err != nil {
			return nil, fmt.Errorf("sandbox: its working directory: %w", err)
		}
	}
	// Parents before children, so that a path below another is mounted on
	// top of it; the order given otherwise (later wins). sort.SliceStable,
	// not slices.SortStableFunc: the generic sort of this struct is 7 KB
	// more in every embedder's binary (internal/archtest's embed size).
	sort.SliceStable(p.Mounts, func(i, j int) bool {
		return strings.Count(p.Mounts[i].Target, "/") < strings.Count(p.Mounts[j].Target, "/")
	})
	return p, nil
}

// describeResolved names path, and what it resolves to when that differs.
func describeResolved(path, resolved string) string {
	if path == resolved {
		return path
	}
	return path + " (which is " + resolved + ")"
}

// sandboxAttr is serverAttr for a sandboxed server's helper: new user,
// mount, pid and IPC namespaces (and network, unless shared), where the
// user is mapped to itself and keeps, across the exec of the helper, the
// capabilities it needs to build the view (ambient, dropped before the
// server starts). The helper is pid 1 of its pid namespace: when it dies,
// the kernel kills every process in it.
func sandboxAttr(p *sandboxPlan) *syscall.SysProcAttr {
	a := serverAttr()
	// IPC: System V shared memory, message queues and semaphores (and
	// POSIX message queues) are the user's across the system otherwise,
	// reachable by key with no path, pid or address.
	a.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC
	if !p.Network {
		a.Cloneflags |= syscall.CLONE_NEWNET
	}
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: p.UID, HostID: p.UID, Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: p.GID, HostID: p.GID, Size: 1}}
	a.GidMappingsEnableSetgroups = false
	// NET_BIND_SERVICE: a listed loopback destination below port 1024 is
	// listened for at its own port (see openNetwork). DAC_OVERRIDE: an
	// overlay works in its upper directory with its mounter's rights (see
	// mountCacheOverlay); it overrides nothing but the user's own files.
	a.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP, unix.CAP_NET_BIND_SERVICE, unix.CAP_DAC_OVERRIDE}
	return a
}

// sandboxForkError explains a fork that the kernel refused to put in new
// namespaces.
func sandboxForkError(err error) error {
	if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EUSERS) {
		return fmt.Errorf("%v: the kernel refused the sandbox's user namespace (are user namespaces allowed for this user?)", err)
	}
	return err
}

func encodePlan(p *sandboxPlan) string {
	b, _ := json.Marshal(p)
	return string(b)
}

// sandboxSpawn is the supervisor's side of a sandboxed spawn: the
// attributes of the helper's fork, from the request's plan, the plan the
// helper gets (without what is the supervisor's alone), and the network
// forwarder of a plan with an allow-list (nil without), whose child end is
// to be the helper's forwarderFd.
func sandboxSpawn(plan string) (*syscall.SysProcAttr, string, *netForwarder, error) {
	var p sandboxPlan
	if err := json.Unmarshal([]byte(plan), &p); err != nil {
		return nil, "", nil, fmt.Errorf("a malformed sandbox plan: %v", err)
	}
	fwd, err := newForwarder(&p)
	if err != nil {
		return nil, "", nil, err
	}
	helper := p
	helper.Proxy = nil // the user's proxy (its credentials, maybe) is no business of the server's
	return sandboxAttr(&p), encodePlan(&helper), fwd, nil
}

// runSandboxHelper is the sandbox helper's mode: args are the plan (JSON)
// then what runExecHelper takes.
func runSandboxHelper(args []string) int {
	if len(args) < 1 {
		fmt.Fprintln(os.Stderr, "switchboard sandbox helper: bad arguments")
		return 2
	}
	var p sandboxPlan
	if err := json.Unmarshal([]byte(args[0]), &p); err != nil {
		fmt.Fprintln(os.Stderr, "switchboard sandbox helper: bad plan")
		return 2
	}
	if p.forwarded() {
		syscall.CloseOnExec(forwarderFd) // the server must not hold the supervisor's socket
	}
	return execHelper(args[1:], &p)
}

// build makes the server's view: first every path it binds is opened once
// (open), then a fresh tmpfs becomes the root, holding those descriptors'
// mounts, a /proc of the pid namespace and the private copies of caches,
// and the old root is detached. It runs in the helper's own mount
// namespace: nothing of it is seen outside.
func (p *sandboxPlan) build(env []string) error {
	step := func(what string, err error) error {
		if err != nil {
			return fmt.Errorf("sandbox: %s: %w", what, err)
		}
		return nil
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return step("making mounts private", err)
	}
	if err := p.open(); err != nil {
		return err
	}
	swapForTests(env)
	// Any existing directory serves as the new root's mount point: it is
	// moved to / at once. /tmp is on every system.
	base := "/tmp"
	if err := unix.Mount("tmpfs", base, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
		return step("mounting the new root", err)
	}
	if err := os.Mkdir(base+"/.oldroot", 0o700); err != nil {
		return step("preparing the new root", err)
	}
	if err := unix.PivotRoot(base, base+"/.oldroot"); err != nil {
		return step("pivot_root", err)
	}
	if err := os.Chdir("/"); err != nil {
		return step("chdir /", err)
	}
	const old = "/.oldroot"
	for i := range p.Mounts {
		m := &p.Mounts[i]
		t := m.Target
		switch m.Kind {
		case mountSymlink:
			os.MkdirAll(filepath.Dir(t), 0o755)
			if err := os.Symlink(m.Source, t); err != nil && !errors.Is(err, os.ErrExist) {
				return step("link "+t, err)
			}
		case mountTmpfs:
			if err := os.MkdirAll(t, 0o755); err != nil {
				return step("mkdir "+t, err)
			}
			mode := "mode=1777"
			if t == "/dev" {
				mode = "mode=0755"
			}
			if err := unix.Mount("tmpfs", t, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, mode); err != nil {
				return step("tmpfs on "+t, err)
			}
		case mountEmpty:
			if err := os.MkdirAll(t, 0o755); err != nil {
				return step("mkdir "+t, err)
			}
		case mountProc:
			if err := mountProcOfOwn(t); err != nil {
				return step("a /proc of its own", err)
			}
		default: // binds of what open opened, and caches' mounts
			if m.File {
				os.MkdirAll(filepath.Dir(t), 0o755)
				if f, err := os.OpenFile(t, os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
					f.Close()
				}
			} else if err := os.MkdirAll(t, 0o755); err != nil {
				return step("mkdir "+t, err)
			}
			if err := m.attach(); err != nil {
				return step("showing "+m.describe(), err)
			}
		}
	}
	if err := unix.Unmount(old, unix.MNT_DETACH); err != nil {
		return step("detaching the old root", err)
	}
	os.Remove(old)
	if err := unix.Mount("", "/", "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
		return step("read-only root", err)
	}
	if !p.Network {
		if err := loopbackUp(); err != nil {
			return step("bringing loopback up", err)
		}
	}
	if p.forwarded() {
		if err := p.openNetwork(); err != nil {
			return step("the network forwarder", err)
		}
	}
	return nil
}

// open opens what each bind shows, before the view is built, in the
// host's tree: a path below Beneath with openat2's RESOLVE_BENEATH (a
// link that leads out fails, however it was changed since the host
// looked), any other as the host resolved it. The descriptor is what is
// bound, and what Landlock's rule names, so nothing can be swapped in
// between. A cache gets its overlay made here (mountCacheOverlay).
func (p *sandboxPlan) open() error {
	rootStat, err := statPath("/")
	if err != nil {
		return fmt.Errorf("sandbox: /: %w", err)
	}
	for i := range p.Mounts {
		m := &p.Mounts[i]
		switch m.Kind {
		case mountRO, mountRW, mountDev:
		case mountCache:
			if err := m.openCache(); err != nil {
				return fmt.Errorf("sandbox: the private copy of %s: %w", m.Target, err)
			}
			continue
		default:
			continue
		}
		fd, err := openSource(m.Source, m.Beneath)
		if err != nil {
			return fmt.Errorf("sandbox: %s: %w", m.Source, err)
		}
		m.fd = fd
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return fmt.Errorf("sandbox: %s: %w", m.Source, err)
		}
		m.File = st.Mode&unix.S_IFMT != unix.S_IFDIR
		if m.Beneath != "" && m.File && st.Mode&unix.S_IFMT != unix.S_IFREG {
			return fmt.Errorf("sandbox: %s is not a directory or a regular file", m.Source)
		}
		if m.Kind == mountRW {
			// The invariant again, on what was opened: whatever the path
			// said, never the root, /proc or /sys.
			var sfs unix.Statfs_t
			if err := unix.Fstatfs(fd, &sfs); err != nil {
				return fmt.Errorf("sandbox: %s: %w", m.Source, err)
			}
			if sfs.Type == unix.PROC_SUPER_MAGIC || sfs.Type == unix.SYSFS_MAGIC || st.Dev == rootStat.Dev && st.Ino == rootStat.Ino {
				return fmt.Errorf("sandbox: %s cannot be written by a sandboxed server (it is the root, or in /proc or /sys)", m.Source)
			}
		}
	}
	return nil
}

func statPath(path string) (unix.Stat_t, error) {
	var st unix.Stat_t
	err := unix.Stat(path, &st)
	return st, err
}

// openSource opens path (O_PATH): beneath root when root is set.
func openSource(path, root string) (int, error) {
	if root == "" {
		return unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	}
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return -1, fmt.Errorf("not below %s", root)
	}
	rfd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	defer unix.Close(rfd)
	for {
		fd, err := unix.Openat2(rfd, rel, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS})
		switch {
		case err == unix.EAGAIN: // a rename raced the lookup: look again
			continue
		case err == unix.EXDEV:
			return -1, fmt.Errorf("it leads out of %s (a link, or ..)", root)
		}
		return fd, err
	}
}

// attach mounts what m's descriptor holds at its target: a copy of the
// bound tree (its mounts below included), read-only for mountRO, never
// with set-user-ID programs or devices (but for mountDev), made before it
// is attached, so that no path is looked up between; a cache's mount as
// made.
func (m *sandboxMount) attach() error {
	tree := m.fd
	if !m.overlay { // a copy of the tree the descriptor is in
		t, err := unix.OpenTree(m.fd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|unix.AT_RECURSIVE)
		if err != nil {
			return fmt.Errorf("open_tree: %w", err)
		}
		defer unix.Close(t)
		tree = t
		attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
		switch m.Kind {
		case mountRO:
			attr.Attr_set |= unix.MOUNT_ATTR_RDONLY
		case mountDev:
			attr.Attr_set = unix.MOUNT_ATTR_NOSUID
		}
		if err := unix.MountSetattr(t, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, attr); err != nil {
			return fmt.Errorf("mount_setattr: %w", err)
		}
	}
	if err := unix.MoveMount(tree, "", unix.AT_FDCWD, m.Target, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("move_mount: %w", err)
	}
	return nil
}

func (m *sandboxMount) describe() string {
	if m.Kind == mountCache {
		return m.Target + " (a private copy)"
	}
	return m.Source
}

// mountProcOfOwn mounts at t the /proc of the helper's pid namespace: the
// server's processes alone, /proc/1 the helper, /proc/1/net the server's
// network. /proc/sys is made read-only (Landlock refuses writes there too).
func mountProcOfOwn(t string) error {
	if err := os.MkdirAll(t, 0o555); err != nil {
		return err
	}
	if err := unix.Mount("proc", t, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		if err == unix.EPERM {
			return fmt.Errorf("mounting proc: %w (this system allows no /proc of a pid namespace in a user namespace, as where parts of /proc are covered by other mounts, in some containers; the sandbox cannot hide other processes here)", err)
		}
		return fmt.Errorf("mounting proc: %w", err)
	}
	sys := t + "/sys"
	tree, err := unix.OpenTree(unix.AT_FDCWD, sys, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
	if err != nil {
		return fmt.Errorf("open_tree %s: %w", sys, err)
	}
	defer unix.Close(tree)
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC}); err != nil {
		return fmt.Errorf("mount_setattr %s: %w", sys, err)
	}
	if err := unix.MoveMount(tree, "", unix.AT_FDCWD, sys, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("move_mount %s: %w", sys, err)
	}
	return nil
}

// forwarded reports whether the plan's network is a namespace of its own
// with an allow-list, relayed by the supervisor.
func (p *sandboxPlan) forwarded() bool { return !p.Network && len(p.Allow) > 0 }

func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// confine restricts this thread, which starts the server next, for good:
// Landlock (read and execute below /, write only to the plan's read-write
// paths, /tmp and the devices; no signal to, no abstract socket of, and
// no ptrace or /proc access to any process outside), no kernel keyring
// (denyKeyrings), no_new_privs, and no
// capability left, even in the bounding set (so that not even a root
// user regains one at the exec).
func (p *sandboxPlan) confine() error {
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		return fmt.Errorf("sandbox: no Landlock: %v", err)
	}
	const fileRights = llsys.AccessFSExecute | llsys.AccessFSWriteFile | llsys.AccessFSReadFile
	handled := uint64(1<<13 - 1) // ABI 1
	fileOnly := uint64(fileRights)
	if abi >= 2 {
		handled |= llsys.AccessFSRefer
	}
	if abi >= 3 {
		handled |= llsys.AccessFSTruncate
		fileOnly |= llsys.AccessFSTruncate
	}
	if abi >= 5 {
		handled |= llsys.AccessFSIoctlDev
		fileOnly |= llsys.AccessFSIoctlDev
	}
	attr := llsys.RulesetAttr{HandledAccessFS: handled}
	if abi >= 6 {
		attr.Scoped = llsys.ScopeAbstractUnixSocket | llsys.ScopeSignal
	}
	rs, err := llsys.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return fmt.Errorf("sandbox: landlock_create_ruleset: %w", err)
	}
	defer unix.Close(rs)
	allow := func(path string, access uint64, file bool) error {
		fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("sandbox: %s: %w", path, err)
		}
		defer unix.Close(fd)
		if file {
			access &= fileOnly
		}
		if err := llsys.LandlockAddPathBeneathRule(rs, &llsys.PathBeneathAttr{AllowedAccess: access & handled, ParentFd: fd}, 0); err != nil {
			return fmt.Errorf("sandbox: landlock rule for %s: %w", path, err)
		}
		return nil
	}
	if err := allow("/", llsys.AccessFSExecute|llsys.AccessFSReadFile|llsys.AccessFSReadDir, false); err != nil {
		return err
	}
	// What may be written is named by the descriptor the view was built
	// from: Landlock's rules hold the inode, wherever it is mounted.
	allowFd := func(m sandboxMount, access uint64) error {
		if m.File {
			access &= fileOnly
		}
		if err := llsys.LandlockAddPathBeneathRule(rs, &llsys.PathBeneathAttr{AllowedAccess: access & handled, ParentFd: m.fd}, 0); err != nil {
			return fmt.Errorf("sandbox: landlock rule for %s: %w", m.describe(), err)
		}
		return nil
	}
	for _, m := range p.Mounts {
		switch {
		case m.Kind == mountRW, m.Kind == mountCache:
			if err := allowFd(m, handled); err != nil {
				return err
			}
		case m.Kind == mountTmpfs && m.Target != "/dev":
			if err := allow(m.Target, handled, m.File); err != nil {
				return err
			}
		case m.Kind == mountDev:
			if err := allow(m.Target, llsys.AccessFSReadFile|llsys.AccessFSWriteFile|llsys.AccessFSIoctlDev|llsys.AccessFSTruncate, true); err != nil {
				return err
			}
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox: no_new_privs: %w", err)
	}
	if err := llsys.LandlockRestrictSelf(rs, 0); err != nil {
		return fmt.Errorf("sandbox: landlock_restrict_self: %w", err)
	}
	if err := denyKeyrings(); err != nil {
		return err
	}
	// The rules hold what they name: the descriptors (and with them the
	// old root's mounts) can go.
	for i := range p.Mounts {
		if m := &p.Mounts[i]; m.fd > 0 {
			unix.Close(m.fd)
			m.fd = 0
		}
	}
	return dropCapabilities()
}

// dropCapabilities empties this thread's bounding, ambient, inheritable,
// permitted and effective sets.
func dropCapabilities() error {
	last := 40
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return fmt.Errorf("sandbox: dropping capability %d: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox: clearing ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("sandbox: capset: %w", err)
	}
	return nil
}

// environ fixes what the view hides from the server's environment: a
// TMPDIR it cannot see becomes the private /tmp, a variable naming a
// local channel of the user's that it cannot see goes (sandboxEnv); with
// an allow-list, the proxy variables name the forwarder's proxy. Called
// once build is done.
func (p *sandboxPlan) environ(env []string) []string {
	env = sandboxEnv(env)
	if p.proxyPort != 0 {
		env = proxyEnv(env, p.proxyPort)
	}
	return env
}

// sandboxEnv makes a TMPDIR the server cannot see the private /tmp, and
// drops each variable that names a local channel of the user's (an
// agent's socket, the session bus, the runtime directory) at a path the
// view lacks: the view hides those channels (docs/security.md, "Your
// local channels"), and a client told of one only fails on it. Called
// in the view.
func sandboxEnv(env []string) []string {
	out := env[:0]
	for _, kv := range env {
		name, v, _ := strings.Cut(kv, "=")
		switch name {
		case "TMPDIR":
			if fi, err := os.Stat(v); err != nil || !fi.IsDir() {
				kv = "TMPDIR=/tmp"
			}
		case "SSH_AUTH_SOCK", "XDG_RUNTIME_DIR", "XAUTHORITY":
			if !inView(v) {
				continue
			}
		case "GPG_AGENT_INFO": // path:pid:version
			if path, _, _ := strings.Cut(v, ":"); !inView(path) {
				continue
			}
		case "DBUS_SESSION_BUS_ADDRESS":
			if !busInView(v) {
				continue
			}
		}
		out = append(out, kv)
	}
	return out
}

// inView reports whether path, absolute, exists in the view.
func inView(path string) bool {
	if !filepath.IsAbs(path) {
		return false
	}
	_, err := os.Lstat(path)
	return err == nil
}

// busInView reports whether D-Bus address list addrs ("unix:path=/x,
// guid=…;…") has one that is not a socket path the view lacks (an
// abstract address, TCP: the network's to allow or refuse).
func busInView(addrs string) bool {
	for _, a := range strings.Split(addrs, ";") {
		if a == "" {
			continue
		}
		path := ""
		if rest, ok := strings.CutPrefix(a, "unix:"); ok {
			for _, kv := range strings.Split(rest, ",") {
				if p, ok := strings.CutPrefix(kv, "path="); ok {
					path = p
				}
			}
		}
		if path == "" || strings.Contains(path, "%") || inView(path) { // escaped: not judged
			return true
		}
	}
	return false
}

// sandboxCommand checks that a sandboxed server can be started: on Linux
// only under the supervisor, which builds the sandbox.
func sandboxCommand(sb *Sandbox, name string, args []string, supervised bool) (string, []string, error) {
	if !supervised {
		return "", nil, fmt.Errorf("%w: a sandboxed server is started by the supervisor, and this program has none (its main must call switchboard.MaybeRunSupervisor first)", ErrSandboxUnavailable)
	}
	return name, args, nil
}

// sandboxRequest adds the plan of sandbox sb to a spawn request.
func sandboxRequest(sb *Sandbox, req *spawnReq) error {
	prog := string(req.Path)
	if !filepath.IsAbs(prog) {
		prog = filepath.Join(string(req.Dir), prog)
	}
	p, err := planSandbox(sb, prog, string(req.Dir))
	if err != nil {
		return err
	}
	req.Sandbox = encodePlan(p)
	return nil
}
