package proc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// cacheSlots bounds the private copies of one cache: one per server of it
// running at once (two overlays must never share an upper directory).
const cacheSlots = 64

// openCache runs in the helper, before the view is built: it takes a slot
// of m's private copies (Private/N, whose lock the helper holds as long as
// it lives, so that no other server's overlay shares its upper directory),
// and makes the overlay of the user's cache (Source, the lower layer) and
// that slot's upper directory. Where the kernel refuses the overlay, or
// the user has no such cache, the slot's upper directory alone is bound
// read-write. Either way nothing of Source can be written.
func (m *sandboxMount) openCache() error {
	dir, err := takeSlot(m.Private)
	if err != nil {
		return err
	}
	upper, work := filepath.Join(dir, "upper"), filepath.Join(dir, "work")
	for _, d := range []string{upper, work} {
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
	}
	if m.Source != "" {
		if fd, err := mountCacheOverlay(m.Source, upper, work); err == nil {
			m.fd, m.overlay = fd, true
			return nil
		}
	}
	fd, err := unix.Open(upper, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	m.fd = fd
	return nil
}

// takeSlot locks the first free slot below base and returns its directory.
// The lock's descriptor is kept open (close-on-exec) for the helper's
// life; the kernel drops it when the helper is gone.
func takeSlot(base string) (string, error) {
	for i := range cacheSlots {
		dir := filepath.Join(base, strconv.Itoa(i))
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return "", err
		}
		fd, err := unix.Open(filepath.Join(dir, "lock"), unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o600)
		if err != nil {
			return "", err
		}
		if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err == nil {
			return dir, nil // fd stays open: the lock
		}
		unix.Close(fd)
	}
	return "", fmt.Errorf("all %d private copies of it are in use", cacheSlots)
}

// mountCacheOverlay makes (detached, to be attached in the view) an
// overlay whose lower layer is lower and whose writes go to upper. It is
// mounted in the helper's user namespace ("userxattr": its bookkeeping in
// user.overlay.* attributes), with no index, so that it claims nothing of
// lower.
func mountCacheOverlay(lower, upper, work string) (int, error) {
	fs, err := unix.Fsopen("overlay", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return -1, err
	}
	defer unix.Close(fs)
	for _, kv := range [][2]string{{"lowerdir", lower}, {"upperdir", upper}, {"workdir", work}, {"index", "off"}} {
		if err := unix.FsconfigSetString(fs, kv[0], kv[1]); err != nil {
			return -1, fmt.Errorf("%s: %w", kv[0], err)
		}
	}
	if err := unix.FsconfigSetFlag(fs, "userxattr"); err != nil {
		return -1, err
	}
	if err := unix.FsconfigCreate(fs); err != nil {
		return -1, err
	}
	return unix.Fsmount(fs, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
}

// RemoveFromCacheCopies removes rel (a folder, relative to the cache) from
// each of the private copies of a cache kept in private (Cache.Private)
// that no running server holds: its lock taken while it is removed, so
// that no overlay starts on it meanwhile. It returns the folders removed.
// Each is renamed aside before it is deleted: a server that starts a
// moment later finds all of it or none.
func RemoveFromCacheCopies(private, rel string) []string {
	if !filepath.IsLocal(rel) {
		return nil
	}
	var removed []string
	for i := range cacheSlots {
		dir := filepath.Join(private, strconv.Itoa(i))
		target := filepath.Join(dir, "upper", rel)
		if fi, err := os.Lstat(target); err != nil || !fi.IsDir() {
			continue
		}
		fd, err := unix.Open(filepath.Join(dir, "lock"), unix.O_RDWR|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if err != nil {
			continue
		}
		if unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) == nil {
			aside := target + ".removing-" + strconv.Itoa(os.Getpid())
			if os.Rename(target, aside) == nil {
				_ = os.RemoveAll(aside)
				removed = append(removed, target)
			}
		}
		unix.Close(fd)
	}
	return removed
}
