package host

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/lazyre"
	"github.com/switchboard-mcp/switchboard/internal/proc"
)

// An npx server whose start was cut short while npx was still installing
// it (a one-shot `switchboard tools` that gave up, a client closed early, a
// machine shut down) leaves npx's copy of its packages (<npm cache>/_npx/
// <hash>) without some of them, and npx runs that copy as it is on every
// later start: the server dies at once with Node's "Cannot find package".
// npx does not mend it, and deleting a folder in the npm cache by hand is
// nothing a user should have to learn. The host removes such a copy, once,
// and starts the server again: npx then installs it whole.
//
// What Node says is the server's word, so it is checked before anything
// is removed: the folder must be an npx copy (_npx/<hex> with npx's
// package.json) in the npm cache the server was started with, and what
// Node could not find must really be missing from it. A server that claims
// another copy is incomplete loses nothing of the user's.

// npxCannotFind is Node's complaint, ESM ("Cannot find package 'zod'
// imported from /…/index.js") or CommonJS ("Cannot find module 'zod'",
// the importer on the "- /…" line after "Require stack:").
var npxCannotFind = lazyre.New(`Cannot find (?:package|module) '([^']+)'(?: imported from (.+?))?\s*$`)

// npxCopyOf matches a path inside an npx copy's node_modules.
var npxCopyOf = lazyre.New(`^(.*[/\\]_npx[/\\][0-9a-f]{8,64})[/\\]node_modules[/\\]`)

// npmPackageName is a package name as npm accepts it (old ones may hold
// capitals), scoped or not.
var npmPackageName = regexp.MustCompile(`^(?:@[A-Za-z0-9][\w.~-]*/)?[A-Za-z0-9][\w.~-]*$`)

// npxMissing is what Node could not find in an npx copy: the copy's
// folder and the importing file, both as the server saw them, and either
// a package name or a file's absolute path inside the copy.
type npxMissing struct {
	dir, importer string
	pkg, file     string
}

// findNpxMissing reads the last Node complaint of that kind in a server's
// stderr tail.
func findNpxMissing(tail []string) (npxMissing, bool) {
	var found npxMissing
	ok := false
	for i, l := range tail {
		m := npxCannotFind().FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		spec, importer := m[1], m[2]
		if importer == "" { // CommonJS: the first line of its require stack
			for j := i + 1; j < len(tail) && j <= i+3; j++ {
				if t := strings.TrimSpace(tail[j]); t == "Require stack:" && j+1 < len(tail) {
					importer = strings.TrimPrefix(strings.TrimSpace(tail[j+1]), "- ")
					break
				}
			}
		}
		c := npxCopyOf().FindStringSubmatch(importer)
		if c == nil {
			continue
		}
		x := npxMissing{dir: filepath.Clean(c[1]), importer: filepath.Clean(importer)}
		if filepath.Base(filepath.Dir(x.dir)) != "_npx" || !within(x.importer, filepath.Join(x.dir, "node_modules")) {
			continue // another system's separators; "…/node_modules/../..": not the copy's
		}
		switch {
		case filepath.IsAbs(spec):
			if !within(filepath.Clean(spec), filepath.Join(x.dir, "node_modules")) {
				continue
			}
			x.file = filepath.Clean(spec)
		case strings.HasPrefix(spec, ".") || strings.Contains(spec, ":"):
			continue // a relative import, a builtin, a URL: not a package of the copy's
		default:
			parts := strings.SplitN(spec, "/", 3)
			name := parts[0]
			if strings.HasPrefix(name, "@") && len(parts) > 1 {
				name += "/" + parts[1]
			}
			if !npmPackageName.MatchString(name) {
				continue
			}
			x.pkg = name
		}
		found, ok = x, true
	}
	return found, ok
}

// npxCache is an npm cache a server was started with: the path it saw,
// and, for a sandboxed server, the folder of its private copies
// (proc.Cache.Private), whose overlays' upper layers hold what npx wrote
// there.
type npxCache struct {
	seen, private string
}

// npxCachesOf are the npm caches of a server about to start with env
// (sandboxed by sb, or not): the sandbox's, else the one its environment
// or the user's npmrc names, and npm's default.
func npxCachesOf(sb *proc.Sandbox, env []string, e runnerEnv) []npxCache {
	if sb != nil {
		var out []npxCache
		for _, c := range sb.Caches {
			out = append(out, npxCache{seen: filepath.Clean(c.Path), private: c.Private})
		}
		return out
	}
	var out []npxCache
	add := func(p string) {
		if p != "" && filepath.IsAbs(p) {
			out = append(out, npxCache{seen: filepath.Clean(p)})
		}
	}
	for _, kv := range env {
		if k, v, _ := strings.Cut(kv, "="); strings.EqualFold(k, "npm_config_cache") {
			add(v)
		}
	}
	add(npmConfig(e)["cache"])
	add(e.or("", ".npm"))
	if la, ok := e.lookupEnv("LOCALAPPDATA"); ok { // npm's default on Windows
		add(filepath.Join(la, "npm-cache"))
	}
	return out
}

// repairNpx removes the npx copy that the server's stderr tail says is
// incomplete, when it is one (see above) and has not been removed for this
// server before. It returns the folder removed, or "".
func (s *server) repairNpx(tail []string) string {
	caches := s.npxCaches.Load()
	if caches == nil {
		return ""
	}
	m, ok := findNpxMissing(tail)
	if !ok {
		return ""
	}
	s.mu.Lock()
	done := s.npxRepaired[m.dir]
	s.mu.Unlock()
	if done {
		return "" // removed once already: what npx installs is missing it
	}
	seen := filepath.Dir(filepath.Dir(m.dir))
	rel, _ := filepath.Rel(seen, m.dir) // _npx/<hash>
	for _, c := range *caches {
		if !samePath(c.seen, seen) {
			continue
		}
		var removed []string
		if c.private != "" {
			removed = proc.RemoveFromCacheCopies(c.private, rel)
		}
		// The user's own copy (a sandbox's lower layer, or the copy an
		// unconfined server runs): only when it lacks what Node missed.
		if cp := filepath.Join(c.seen, rel); m.lacks(cp) && removeCopy(cp) {
			removed = append(removed, cp)
		}
		if len(removed) == 0 {
			continue
		}
		s.mu.Lock()
		if s.npxRepaired == nil {
			s.npxRepaired = map[string]bool{}
		}
		s.npxRepaired[m.dir] = true
		s.mu.Unlock()
		return strings.Join(removed, ", ")
	}
	return ""
}

// samePath reports whether a and b name the same folder, links resolved.
func samePath(a, b string) bool {
	if a == b {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// lacks reports whether cp, an npx copy on disk standing for m.dir, is
// one (a real folder holding npx's package.json) and lacks what Node
// could not find: the file, or the package in every node_modules from the
// importer's folder up to the copy's.
func (m npxMissing) lacks(cp string) bool {
	if fi, err := os.Lstat(cp); err != nil || !fi.IsDir() {
		return false
	}
	if fi, err := os.Lstat(filepath.Join(cp, "package.json")); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	onDisk := func(p string) string { // p, inside m.dir, as a path in cp
		rel, err := filepath.Rel(m.dir, p)
		if err != nil {
			return ""
		}
		return filepath.Join(cp, rel)
	}
	absent := func(p string) bool {
		_, err := os.Lstat(p)
		return errors.Is(err, fs.ErrNotExist)
	}
	if m.file != "" {
		return absent(onDisk(m.file))
	}
	for d := filepath.Dir(m.importer); within(d, m.dir); d = filepath.Dir(d) {
		if filepath.Base(d) == "node_modules" {
			continue
		}
		if !absent(filepath.Join(onDisk(d), "node_modules", m.pkg)) {
			return false
		}
		if d == m.dir {
			break
		}
	}
	return true
}

// removeCopy removes an npx copy: renamed aside first, so that npx never
// finds half of it, then deleted.
func removeCopy(cp string) bool {
	aside := cp + ".incomplete-" + strconv.Itoa(os.Getpid())
	if err := os.Rename(cp, aside); err != nil {
		return false
	}
	_ = os.RemoveAll(aside)
	return true
}

// npxRepairedError is a start that failed on an incomplete npx copy, which
// the host removed (folder): the next start installs it whole.
type npxRepairedError struct {
	err    error
	folder string
}

func (e *npxRepairedError) Error() string { return e.err.Error() }
func (e *npxRepairedError) Unwrap() error { return e.err }
