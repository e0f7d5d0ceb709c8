//go:build linux

package testfuse

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// Stall says which requests of the daemon wait until Resume.
type Stall int

const (
	// Nothing stalls.
	Nothing Stall = iota
	// Opens stall: looking files up and reading their attributes still
	// work (a stat succeeds), opening one, as exec does, hangs.
	Opens
	// Everything stalls: lookups, attributes, opens, reads and statfs.
	Everything
)

// FS is a mounted test filesystem.
type FS struct {
	// Dir is the mount point.
	Dir string

	root *dirNode
	srv  *fuse.Server

	mu      sync.Mutex
	stall   Stall
	deaf    bool          // held requests ignore even a dying caller
	resumed chan struct{} // closed by Resume
	waiting int           // requests held now
}

// Mount mounts an empty filesystem on a new directory, unmounted when the
// test ends. It skips the test where FUSE cannot be mounted.
func Mount(t testing.TB) *FS {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting FUSE without fusermount needs root")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("no FUSE here: %v", err)
	}
	f := &FS{Dir: t.TempDir(), resumed: make(chan struct{})}
	f.root = &dirNode{f: f}
	zero := time.Duration(0)
	srv, err := fs.Mount(f.Dir, f.root, &fs.Options{
		// Every access reaches the daemon: nothing is answered from the
		// kernel's caches, as with a server that must be asked.
		EntryTimeout:    &zero,
		AttrTimeout:     &zero,
		NegativeTimeout: &zero,
		MountOptions: fuse.MountOptions{
			DirectMount:       true,
			DirectMountStrict: true,
			FsName:            "switchboard-testfuse",
			Name:              "testfuse",
		},
	})
	if err != nil {
		t.Skipf("cannot mount FUSE here: %v", err)
	}
	f.srv = srv
	t.Cleanup(func() {
		f.Resume()
		if err := srv.Unmount(); err != nil {
			// Something still holds it: detach it, the kernel finishes later.
			syscall.Unmount(f.Dir, syscall.MNT_DETACH)
		}
	})
	return f
}

// AddFile serves data as name (in the root directory) with mode, e.g. 0o755
// for a script the tests execute.
func (f *FS) AddFile(name string, data []byte, mode uint32) {
	ctx := context.Background()
	n := &fileNode{f: f, MemRegularFile: fs.MemRegularFile{Data: data, Attr: fuse.Attr{Mode: mode}}}
	ch := f.root.NewPersistentInode(ctx, n, fs.StableAttr{Mode: syscall.S_IFREG})
	f.root.AddChild(name, ch, true)
}

// AddDir adds an empty directory name to the root.
func (f *FS) AddDir(name string) {
	ctx := context.Background()
	ch := f.root.NewPersistentInode(ctx, &dirNode{f: f}, fs.StableAttr{Mode: syscall.S_IFDIR})
	f.root.AddChild(name, ch, true)
}

// Stall makes the requests s names wait until Resume, or maxStall.
func (f *FS) Stall(s Stall) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stall = s
	resumed := make(chan struct{})
	f.resumed = resumed
	time.AfterFunc(maxStall, func() {
		f.mu.Lock()
		mine := f.resumed == resumed
		f.mu.Unlock()
		if mine {
			f.Resume()
		}
	})
}

// Deafen makes the requests held from now on wait even for a caller that
// is being killed, until Resume (or maxStall): a daemon that took the
// request and waits on a peer that is gone (sshfs, rclone) holds its
// caller in the kernel, SIGKILL or not. Resume ends it.
func (f *FS) Deafen() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deaf = true
}

// maxStall bounds every stall. The daemon runs in the test process: were
// that process to exit (a test timeout's panic) while one of its own
// threads waits on the mount, the kernel would wait for an answer no one
// can give any more, and the process would never end.
const maxStall = 30 * time.Second

// Resume answers every held request and stalls nothing more.
func (f *FS) Resume() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deaf = false
	if f.stall != Nothing {
		f.stall = Nothing
		close(f.resumed)
	}
}

// Waiting is the number of requests held now.
func (f *FS) Waiting() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.waiting
}

// WaitForHeld waits until a request is held, or d passed.
func (f *FS) WaitForHeld(d time.Duration) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if f.Waiting() > 0 {
			return true
		}
	}
	return false
}

// gate holds a request of kind op while it is to stall. As a hard NFS
// mount does, it ignores the caller's signals but a fatal one: the kernel
// interrupts a request at any signal (ctx ends), and a Go caller gets
// many (the runtime preempts with SIGURG), so a held request ends early
// only once its caller is being killed.
func (f *FS) gate(ctx context.Context, op Stall) syscall.Errno {
	f.mu.Lock()
	if f.stall == Nothing || f.stall < op {
		f.mu.Unlock()
		return 0
	}
	resumed, deaf := f.resumed, f.deaf
	f.waiting++
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.waiting--
		f.mu.Unlock()
	}()
	if deaf {
		<-resumed
		return 0
	}
	select {
	case <-resumed:
		return 0
	case <-ctx.Done():
	}
	caller, _ := fuse.FromContext(ctx)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if caller == nil || dying(int(caller.Pid)) {
			return syscall.EINTR
		}
		select {
		case <-resumed:
			return 0
		case <-tick.C:
		}
	}
}

// dying reports whether process pid is gone or has a SIGKILL pending.
func dying(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return true
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || (k != "SigPnd" && k != "ShdPnd") {
			continue
		}
		if mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64); err == nil && mask&(1<<(syscall.SIGKILL-1)) != 0 {
			return true
		}
	}
	return false
}

type dirNode struct {
	fs.Inode
	f *FS
}

var (
	_ fs.NodeGetattrer = (*dirNode)(nil)
	_ fs.NodeStatfser  = (*dirNode)(nil)
	_ fs.NodeLookuper  = (*dirNode)(nil)
)

func (n *dirNode) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if errno := n.f.gate(ctx, Everything); errno != 0 {
		return errno
	}
	out.Mode = syscall.S_IFDIR | 0o755
	return 0
}

func (n *dirNode) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	return n.f.gate(ctx, Everything)
}

// Lookup finds a child added with AddFile or AddDir.
func (n *dirNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if errno := n.f.gate(ctx, Everything); errno != 0 {
		return nil, errno
	}
	ch := n.GetChild(name)
	if ch == nil {
		return nil, syscall.ENOENT
	}
	if g, ok := ch.Operations().(fs.NodeGetattrer); ok {
		var a fuse.AttrOut
		if errno := g.Getattr(ctx, nil, &a); errno != 0 {
			return nil, errno
		}
		out.Attr = a.Attr
	}
	return ch, 0
}

type fileNode struct {
	fs.MemRegularFile
	f *FS
}

var (
	_ fs.NodeOpener    = (*fileNode)(nil)
	_ fs.NodeGetattrer = (*fileNode)(nil)
	_ fs.NodeReader    = (*fileNode)(nil)
)

func (n *fileNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if errno := n.f.gate(ctx, Opens); errno != 0 {
		return nil, 0, errno
	}
	return n.MemRegularFile.Open(ctx, flags)
}

func (n *fileNode) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if errno := n.f.gate(ctx, Everything); errno != 0 {
		return errno
	}
	return n.MemRegularFile.Getattr(ctx, fh, out)
}

func (n *fileNode) Read(ctx context.Context, fh fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if errno := n.f.gate(ctx, Everything); errno != 0 {
		return nil, errno
	}
	return n.MemRegularFile.Read(ctx, fh, dest, off)
}
