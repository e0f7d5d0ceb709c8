package config

import "sync"

// LastGood remembers the last good contents of configuration files, so
// that a long-running host (one that reloads live; docs/gateway.md, Live
// reload) keeps a file that is broken mid-edit
// in effect as it last loaded, instead of stopping every server it defines
// over a typo. Give the same LastGood to every Load
// ([LoadOptions.LastGood]):
//
//   - a file that loads is remembered;
//   - a file that is there but cannot be read or does not parse is loaded
//     from what was remembered of it: its error is reported all the same,
//     with a warning that its last good contents stay in effect. A file
//     broken since the first Load has nothing remembered and defines
//     nothing, as without a LastGood;
//   - a file that reads empty where its remembered contents were not is
//     loaded from those too, and listed in Files.Unsettled: a program
//     writing it may have truncated it and not written it yet. The
//     reloader (which can wait; Load cannot) reads it again once it stops
//     changing and calls Forget if it is still empty, so that an empty file
//     that stays empty applies;
//   - a file that is gone (no file there, a symbolic link to nothing, a
//     directory) is forgotten: removing a file always removes what it
//     defined; so is every file a Load no longer reads (a scope that fell
//     back to its next file, a workspace that moved).
//
// Only whole files are kept: a file that parses is used as it is now, an
// invalid server or a malformed list in it included, so the valid parts of
// an edit (a managed deny list, say) apply at once.
//
// The zero value is ready to use. It is safe for concurrent use.
type LastGood struct {
	mu    sync.Mutex
	files map[string][]byte
}

func (g *LastGood) remember(path string, data []byte) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.files == nil {
		g.files = make(map[string][]byte)
	}
	g.files[path] = data
}

func (g *LastGood) forget(path string) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.files, path)
}

// retain forgets every file but those in keep.
func (g *LastGood) retain(keep map[string]bool) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for p := range g.files {
		if !keep[p] {
			delete(g.files, p)
		}
	}
}

func (g *LastGood) get(path string) ([]byte, bool) {
	if g == nil {
		return nil, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	data, ok := g.files[path]
	return data, ok
}

// Forget drops what is remembered of the files at paths: the next Load
// takes them as they are then. A reloader calls it for the files of
// Files.Unsettled that are still empty once they have settled.
func (g *LastGood) Forget(paths ...string) {
	for _, p := range paths {
		g.forget(p)
	}
}
