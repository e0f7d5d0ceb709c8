package cli

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/switchboard-mcp/switchboard/config"
)

// reloadDebounce merges the burst of events one save makes (editors write
// a temp file and rename it) into one reload.
const reloadDebounce = 200 * time.Millisecond

// watchConfig watches the directories of the configuration files in use
// (user, project, workspace, managed, --mcp-config files) and calls reload,
// debounced, after anything in one of them changes: a file that does not
// exist yet is picked up when it is created. Settings files live
// beside them, so a changed permission rule is reloaded too. stop ends the
// watch and waits for a reload in progress.
func watchConfig(cfg *config.Resolved, log *slog.Logger, reload func()) (stop func(), err error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	files := []string{cfg.Files.User, cfg.Files.Managed, cfg.Files.Project, cfg.Files.Workspace}
	if cfg.Workspace != "" {
		files = append(files, filepath.Join(cfg.Workspace, ".mcp.json"), filepath.Join(cfg.Workspace, ".switchboard", "settings.json"))
	}
	for _, f := range cfg.Files.Flags {
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() {
			files = append(files, f)
		}
	}
	dirs := map[string]bool{}
	for _, f := range files {
		if f == "" {
			continue
		}
		dir := filepath.Dir(f)
		if dirs[dir] {
			continue
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		if err := w.Add(dir); err != nil {
			log.Warn("cannot watch a configuration directory", "dir", dir, "error", err)
			continue
		}
		dirs[dir] = true
	}
	var (
		wg   sync.WaitGroup
		done = make(chan struct{})
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		var timer *time.Timer
		var fire <-chan time.Time
		for {
			select {
			case <-done:
				if timer != nil {
					timer.Stop()
				}
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				// Any change counts, not only *.json: a Kubernetes ConfigMap
				// is updated by swapping a "..data" symlink. A reload
				// that changes nothing is a cheap no-op.
				if ev.Op == fsnotify.Chmod || strings.HasSuffix(ev.Name, "~") {
					continue
				}
				if timer == nil {
					timer = time.NewTimer(reloadDebounce)
				} else {
					timer.Reset(reloadDebounce)
				}
				fire = timer.C
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				log.Warn("watching the configuration", "error", err)
			case <-fire:
				fire = nil
				reload()
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
