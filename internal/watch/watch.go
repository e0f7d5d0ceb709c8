// Package watch follows configuration files on disk: it watches the
// folders of the files a load looked for (or, for a folder that does not
// exist yet, its nearest existing ancestor) and calls a reload, debounced,
// after a change that can matter. It is what keeps a long-running
// Switchboard (a gateway, an embedder's [switchboard.Switchboard.Watch]) in
// step with its configuration and settings files.
package watch

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/switchboard-mcp/switchboard/config"
)

// Debounce merges the burst of events one save makes (editors write
// a temp file and rename it) into one reload.
const Debounce = 200 * time.Millisecond

// MaxDelay bounds how long events can put a reload off: a file
// written again and again in a watched folder (a log, a repository's
// .switchboard/) must not keep an edit, a managed deny list above all,
// from being applied.
const MaxDelay = time.Second

// Settle is how long the files in force must go without a change before
// a reload that found a configuration file empty, where it last held
// servers, reads it again as settled (reload's settled): most programs
// truncate a file before they write it (`jq … > file`), and a reload in
// between would stop every server the file defines and start them all
// again a moment later. A file still empty then is taken as written.
const Settle = 2 * time.Second

// maxWatchSyncs bounds the rounds of syncWatches: each round that adds a
// watch looks again, since a folder may appear between a look and a watch.
const maxWatchSyncs = 8

// File is a file whose creation, change or removal reloads the
// configuration.
type File struct {
	Path string
	// Bound is the highest folder watched while path's folder does not
	// exist; "" means no bound (the filesystem root).
	Bound string
	// Shared marks a folder that holds more than configuration (the home
	// or the project folder): there only changes to path count. In a
	// folder of Switchboard's own, every change counts: a Kubernetes
	// ConfigMap is updated by swapping a "..data" symlink.
	Shared bool
}

// Files lists the files a reload depends on: every
// configuration file the load of cfg looked for (config.Files.Searched),
// and the permission settings files. home is the Switchboard directory,
// homeDir the user's home (the bound for files under it, as the project
// root is for the project's files).
func Files(cfg *config.Resolved, home, homeDir string) []File {
	paths := append([]string(nil), cfg.Files.Searched...)
	if home != "" {
		paths = append(paths, config.UserSettingsPath(home))
	}
	if cfg.Files.Managed != "" {
		paths = append(paths, config.ManagedSettingsPath(filepath.Dir(cfg.Files.Managed)))
	}
	root := absClean(cfg.Workspace)
	if root != "" {
		paths = append(paths, config.ProjectSettingsPath(root))
	}
	homeDir = absClean(homeDir)
	var out []File
	for _, p := range paths {
		if p = absClean(p); p == "" {
			continue
		}
		f := File{Path: p}
		dir := filepath.Dir(p)
		f.Shared = dir == homeDir || dir == root
		switch {
		case root != "" && Within(p, root):
			f.Bound = root
		case homeDir != "" && Within(p, homeDir):
			f.Bound = homeDir
		}
		out = append(out, f)
	}
	return out
}

func absClean(p string) string {
	if p == "" {
		return ""
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}

// Within reports whether p is dir or below it, comparing the cleaned
// spellings (no links followed).
func Within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// configWatcher keeps fsnotify watches on the folders of the files in
// force, or, for a folder that does not exist yet, on its nearest existing
// ancestor, so that a folder created later (a first `mcp add` makes
// ~/.switchboard) is watched as soon as it appears. Only its goroutine
// uses it.
type configWatcher struct {
	w     *fsnotify.Watcher
	log   *slog.Logger
	files func() []File
	// watched are the folders added to w.
	watched map[string]bool
	// counts are the paths whose events count; every event in a folder of
	// anyChange counts.
	counts    map[string]bool
	anyChange map[string]bool
	// failed are folders that could not be watched, reported once.
	failed map[string]bool
}

// plan computes the folders to watch now and which events count.
func (c *configWatcher) plan() (dirs, counts, anyChange map[string]bool) {
	dirs, counts, anyChange = map[string]bool{}, map[string]bool{}, map[string]bool{}
	files := c.files()
	for i, n := 0, len(files); i < len(files); i++ {
		f := files[i]
		dir := filepath.Dir(f.Path)
		// A link on the way (a dotfiles manager's ~/.switchboard, or the
		// file itself) can be pointed elsewhere: that is an event in
		// the link's folder, for the link's name.
		for _, l := range links(f.Path) {
			if ld := filepath.Dir(l); isDirPath(ld) {
				dirs[ld], counts[l] = true, true
			}
		}
		// A file that is a link is edited at its target, whose folder no
		// watch of dir sees: the target is watched for as a file of its
		// own (its name only), also while it leads nowhere yet (a
		// dotfiles checkout not cloned yet, or cloned again).
		if t := linkTarget(f.Path); t != "" && i < n {
			tf := File{Path: t, Shared: true}
			if f.Bound != "" && Within(t, f.Bound) {
				tf.Bound = f.Bound
			}
			files = append(files, tf)
		}
		if isDirPath(dir) {
			// Watched where it resolves to: a watch follows a folder,
			// not its name, so once a link is pointed elsewhere the next
			// plan names a folder not watched yet.
			dir = resolved(dir)
			dirs[dir], counts[dir] = true, true // dir: its own removal
			counts[filepath.Join(dir, filepath.Base(f.Path))] = true
			if !f.Shared {
				anyChange[dir] = true
			}
			continue
		}
		// Watch the nearest existing ancestor for the next folder down.
		for child := dir; ; {
			parent := filepath.Dir(child)
			if parent == child || (f.Bound != "" && !Within(parent, f.Bound)) {
				break
			}
			if isDirPath(parent) {
				// Resolved, as above: one folder, one name for its watch.
				rp := resolved(parent)
				dirs[rp], counts[rp], counts[filepath.Join(rp, filepath.Base(child))] = true, true, true
				break
			}
			child = parent
		}
	}
	return dirs, counts, anyChange
}

// syncWatches makes the watches match the files in force and reports
// whether it added one: what happened in that folder before is not known
// from events, so the caller reloads after.
func (c *configWatcher) syncWatches() (added bool) {
	for range maxWatchSyncs {
		dirs, counts, anyChange := c.plan()
		c.counts, c.anyChange = counts, anyChange
		again := false
		for d := range c.watched {
			if !dirs[d] {
				_ = c.w.Remove(d) // already gone with its folder, maybe
				delete(c.watched, d)
			}
		}
		for d := range dirs {
			if c.watched[d] {
				continue
			}
			if err := c.w.Add(d); err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					again = true // removed since plan looked: look again
				} else if !c.failed[d] {
					c.failed[d] = true
					c.log.Warn("cannot watch a configuration folder", "dir", d, "error", err)
				}
				continue
			}
			c.watched[d] = true
			added, again = true, true
		}
		if !again {
			break
		}
	}
	return added
}

// relevant reports whether ev can change the configuration.
func (c *configWatcher) relevant(ev fsnotify.Event) bool {
	if strings.HasSuffix(ev.Name, "~") {
		return false
	}
	if ev.Op == fsnotify.Chmod {
		// A configuration file's own mode counts (one made readable again
		// loads); the mode changes of everything else in its folder do not.
		return c.counts[ev.Name]
	}
	return c.counts[ev.Name] || c.anyChange[filepath.Dir(ev.Name)]
}

// Start watches the folders of the configuration files that files
// lists (see Files) and calls reload, debounced, after a
// change that can matter: a file that does not exist yet is picked up when
// it is created, and so is one in a folder that does not exist yet, or
// that is removed and made again. files is called again after each reload,
// so the watches follow the configuration in force; it and reload run on
// the watcher's goroutine, never at the same time; reload runs once soon
// after the start too. stop ends the watch and waits for a reload in
// progress.
//
// reload reports whether it left files unsettled (read empty, possibly
// half-written; see config.Files.Unsettled): it is then called again once
// no change has been seen for Settle, with settled true, unless a change
// comes first (which calls it, debounced, with settled false).
func Start(files func() []File, log *slog.Logger, reload func(settled bool) (unsettled bool)) (stop func(), err error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	c := &configWatcher{w: w, log: log, files: files, watched: map[string]bool{}, failed: map[string]bool{}}
	c.syncWatches()
	var (
		wg   sync.WaitGroup
		done = make(chan struct{})
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		// The first reload reads what changed between the caller's load
		// and the watches; it changes nothing otherwise.
		timer := time.NewTimer(Debounce)
		pending := time.Now() // the first event not read yet; zero if none
		// settling: the timer runs for Settle after a reload that left
		// files unsettled, and nothing has changed since.
		settling := false
		schedule := func() {
			now := time.Now()
			if pending.IsZero() {
				pending = now
			}
			settling = false
			timer.Reset(max(min(Debounce, pending.Add(MaxDelay).Sub(now)), 0))
		}
		defer timer.Stop()
		for {
			select {
			case <-done:
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if (ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)) && c.watched[ev.Name] {
					// The folder went with its watch: watch it again (or
					// its parent) at the next sync.
					_ = w.Remove(ev.Name)
					delete(c.watched, ev.Name)
				}
				if c.relevant(ev) {
					schedule()
				}
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				log.Warn("watching the configuration", "error", err)
				if errors.Is(err, fsnotify.ErrEventOverflow) {
					schedule() // events were lost: look at everything again
				}
			case <-timer.C:
				pending = time.Time{}
				settled := settling
				settling = false
				// Watch new folders before reading, so that nothing
				// written between the read and the watch is missed.
				c.syncWatches()
				unsettled := reload(settled)
				switch {
				case c.syncWatches():
					// The configuration now in force looks elsewhere:
					// read what the new watches did not see.
					schedule()
				case unsettled:
					settling = true
					timer.Reset(Settle)
				}
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			w.Close()
			wg.Wait()
		})
	}, nil
}

// linkTarget is what p, a link, leads to in the end: the file it
// resolves to, or, when it leads nowhere, the path that is missing at the
// end of its links. "" when p is no link (or its links loop).
func linkTarget(p string) string {
	if fi, err := os.Lstat(p); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return ""
	}
	if t, err := filepath.EvalSymlinks(p); err == nil {
		return t
	}
	cur := p
	for range 40 { // as many links as Linux follows
		l, err := os.Readlink(cur)
		if err != nil {
			return ""
		}
		if !filepath.IsAbs(l) {
			l = filepath.Join(filepath.Dir(cur), l)
		}
		cur = filepath.Clean(l)
		if fi, err := os.Lstat(cur); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return cur
		}
	}
	return ""
}

// resolved is p with every link in it followed; p when that fails.
func resolved(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// links lists the links that p passes through (p included), each as its
// folder resolves, with the link's own name.
func links(p string) []string {
	var out []string
	for cur := p; ; {
		parent := filepath.Dir(cur)
		if parent == cur {
			return out
		}
		if fi, err := os.Lstat(cur); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			out = append(out, filepath.Join(resolved(parent), filepath.Base(cur)))
		}
		cur = parent
	}
}

func isDirPath(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// With returns files with path added (when it is not "" and not there
// yet), bounded by homeDir when it is under it: a file beside the
// configuration that a reload also reads (a gateway's auth file).
func With(files []File, path, homeDir string) []File {
	p := absClean(path)
	if p == "" {
		return files
	}
	for _, f := range files {
		if f.Path == p {
			return files
		}
	}
	f := File{Path: p, Shared: true}
	if homeDir = absClean(homeDir); homeDir != "" && Within(p, homeDir) {
		f.Bound = homeDir
	}
	return append(files, f)
}
