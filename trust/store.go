package trust

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/atomicfile"
	"github.com/switchboard-mcp/switchboard/internal/filelock"
	"github.com/switchboard-mcp/switchboard/internal/fileowner"
	"github.com/switchboard-mcp/switchboard/internal/safefile"
)

// FileName is the store's file in the Switchboard home directory.
const FileName = "trust.json"

// storeVersion is the "version" of the file this package writes and reads.
const storeVersion = 1

// Approval is what the store keeps about one approved server of one
// workspace.
type Approval struct {
	// Fingerprint of the approved definition ([Fingerprint]).
	Fingerprint string `json:"fingerprint"`
	// ApprovedAt is when the user approved it (UTC).
	ApprovedAt time.Time `json:"approvedAt"`
	// Definition summarizes what was approved, for people and for saying
	// what changed. Values that may be secrets are not kept.
	Definition Summary `json:"definition"`
	// Fields maps each of [Fields] to the SHA-256 of its canonical value,
	// so that a changed definition can be reported field by field.
	Fields map[string]string `json:"fields"`
}

// Summary is the readable part of an approved definition: what ran, but
// env and header values only as their keys.
type Summary struct {
	Type           string   `json:"type,omitempty"`
	Command        string   `json:"command,omitempty"`
	Args           []string `json:"args,omitempty"`
	Cwd            string   `json:"cwd,omitempty"`
	URL            string   `json:"url,omitempty"`
	EnvKeys        []string `json:"envKeys,omitempty"`
	HeaderKeys     []string `json:"headerKeys,omitempty"`
	HeadersHelper  string   `json:"headersHelper,omitempty"`
	EnvPassthrough []string `json:"env_passthrough,omitempty"`
}

// Summarize returns the summary of a definition as written.
func Summarize(def config.Server) Summary {
	return Summary{
		Type:           string(config.InferType(def)),
		Command:        def.Command,
		Args:           append([]string(nil), def.Args...),
		Cwd:            def.Cwd,
		URL:            def.URL,
		EnvKeys:        keys(def.Env),
		HeaderKeys:     keys(def.Headers),
		HeadersHelper:  def.HeadersHelper,
		EnvPassthrough: append([]string(nil), def.EnvPassthrough...),
	}
}

// storeFile is the JSON document of trust.json.
type storeFile struct {
	Version int `json:"version"`
	// Workspaces maps a workspace's key ([WorkspaceKey]: its absolute
	// root with symlinks resolved) to its approvals. Files written before
	// keys were resolved may hold unresolved paths; see workspaceKeys.
	Workspaces map[string]*workspaceEntry `json:"workspaces"`
}

type workspaceEntry struct {
	Servers map[string]*Approval `json:"servers"`
}

// Store is the launch-trust store: approvals per workspace (its absolute
// root with symlinks resolved, [WorkspaceKey]) and server name, in <home>/trust.json (mode 0600 in a 0700
// directory). A Store is safe for concurrent use, also by several
// processes at once. Writes replace the file atomically (write a temporary
// file, then rename), after reading it again under the file's lock so that
// approvals made meanwhile by another process are kept.
//
// A file that cannot be read, does not parse, or can be written by other
// users (itself, or on Unix its directory; or it is another user's) fails
// closed: nothing is approved, [Store.Err] says why and how to
// fix it, and the store refuses to write over it (so nothing is lost).
type Store struct {
	path string

	mu   sync.Mutex
	data storeFile
	err  error
	// seen is the file as last read, so that a change made by another
	// process is picked up (see refreshLocked).
	seen safefile.Seen
}

// Open reads the store of the Switchboard home directory home. It never
// fails: a missing file is an empty store, and a bad one is reported by
// [Store.Err] while the store approves nothing.
//
// A Store notices when another process changes the file (an approval
// given with `switchboard mcp approve` while a gateway runs) and reads it
// again before its next answer.
func Open(home string) *Store {
	s := &Store{path: filepath.Join(home, FileName)}
	s.mu.Lock()
	s.reloadLocked()
	s.mu.Unlock()
	return s
}

// reloadLocked reads the file and remembers which one it read.
func (s *Store) reloadLocked() {
	s.seen.Remember(s.path)
	s.data, s.err = readStore(s.path)
}

// refreshLocked reads the file again if it is not the one last read: it
// was replaced (every write renames a new file in), changed or removed.
func (s *Store) refreshLocked() {
	if s.seen.Changed(s.path) {
		s.reloadLocked()
	}
}

// Path is the store's file.
func (s *Store) Path() string { return s.path }

// Err reports why the store's file could not be used (nil when it could,
// or does not exist yet). The message is one line with a fix.
func (s *Store) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refreshLocked()
	return s.err
}

// WorkspaceKey is the key the store files a workspace's approvals under:
// the cleaned absolute path with every symbolic link resolved
// ([filepath.EvalSymlinks]). One directory reached through several paths
// (a symlinked checkout, /tmp and /private/tmp on macOS) is then one
// workspace, and a symlink repointed at another directory does not carry
// the first one's approvals along. When resolution fails (the directory
// does not exist, or a component of the path cannot be read) the key is
// the cleaned path itself: such a path can never be another existing
// directory's resolved path, so two directories never share a key. A path
// that is not absolute has no key ("").
//
// It reads the file system (the links along the path) on every call, so
// that a repointed link is seen at once. It is config.ProjectKey, the key
// the configuration files a workspace's local entries under: one
// directory, one key, for servers, settings and approvals alike.
func WorkspaceKey(workspace string) string { return config.ProjectKey(workspace) }

// workspaceKeys returns where approvals of workspace may be filed: its
// key ([WorkspaceKey]) first, then — when it differs — the path exactly
// as given, the key a version that did not resolve links wrote. Such a
// legacy entry is honored only for that very path: it grants what the
// older version granted for it, and nothing through any other path (the
// link may point elsewhere now than when it was approved). Approve moves
// the entry to the key; Revoke and Reset remove both.
func workspaceKeys(workspace string) []string {
	key := WorkspaceKey(workspace)
	if key == "" {
		return nil
	}
	if literal := filepath.Clean(workspace); literal != key {
		return []string{key, literal}
	}
	return []string{key}
}

// Lookup returns the approval of a server in a workspace: the one filed
// under its key, else one filed under the path as given (see
// [WorkspaceKey]).
func (s *Store) Lookup(workspace, name string) (Approval, bool) {
	l := s.lookupAll(workspace, name)
	if len(l) == 0 {
		return Approval{}, false
	}
	return l[0], true
}

// lookupAll returns the approvals of a server filed for workspace, in the
// order of workspaceKeys.
func (s *Store) lookupAll(workspace, name string) []Approval {
	keys := workspaceKeys(workspace)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refreshLocked()
	if s.err != nil {
		return nil
	}
	var out []Approval
	for _, k := range keys {
		if ws := s.data.Workspaces[k]; ws != nil && ws.Servers[name] != nil {
			out = append(out, *ws.Servers[name])
		}
	}
	return out
}

// Approved returns the names approved in a workspace, sorted (nil when
// there are none).
func (s *Store) Approved(workspace string) []string {
	keys := workspaceKeys(workspace)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refreshLocked()
	if s.err != nil {
		return nil
	}
	seen := map[string]bool{}
	for _, k := range keys {
		if ws := s.data.Workspaces[k]; ws != nil {
			for n := range ws.Servers {
				seen[n] = true
			}
		}
	}
	var names []string // nil when none, as before
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Approve records rs's written definition as approved in workspace (an
// absolute path) at now, and saves the store. It is filed under the
// workspace's key ([WorkspaceKey]); an approval of the same server filed
// by an older version under the unresolved path is replaced.
func (s *Store) Approve(workspace string, rs *config.ResolvedServer, now time.Time) (Approval, error) {
	if workspace == "" || !filepath.IsAbs(workspace) {
		return Approval{}, fmt.Errorf("approving %s: the workspace must be an absolute path, not %q", rs.Name, workspace)
	}
	keys := workspaceKeys(workspace)
	a := Approval{
		Fingerprint: Fingerprint(rs.Written),
		ApprovedAt:  now.UTC().Truncate(time.Second),
		Definition:  Summarize(rs.Written),
		Fields:      fieldDigests(rs.Written),
	}
	err := s.update(func(d *storeFile) {
		for _, k := range keys[1:] {
			deleteServer(d, k, rs.Name)
		}
		ws := d.Workspaces[keys[0]]
		if ws == nil {
			ws = &workspaceEntry{Servers: map[string]*Approval{}}
			d.Workspaces[keys[0]] = ws
		}
		ws.Servers[rs.Name] = &a
	})
	return a, err
}

// deleteServer removes name's approval filed under key, and the
// workspace's entry when it is left empty. It reports whether there was
// one.
func deleteServer(d *storeFile, key, name string) bool {
	ws := d.Workspaces[key]
	if ws == nil || ws.Servers[name] == nil {
		return false
	}
	delete(ws.Servers, name)
	if len(ws.Servers) == 0 {
		delete(d.Workspaces, key)
	}
	return true
}

// filedFor returns every key of d under which approvals of workspace are
// filed: its key, the path as given, and any other stored path that
// resolves to the same directory now (an older version's entry made
// through another symlink). Forgetting a workspace forgets all of them,
// so that no path to the directory keeps an approval the user withdrew.
func filedFor(d *storeFile, workspace string) []string {
	key := WorkspaceKey(workspace)
	want := map[string]bool{workspace: true} // not absolute: only exactly this string
	for _, k := range workspaceKeys(workspace) {
		want[k] = true
	}
	var out []string
	for k := range d.Workspaces {
		if want[k] || (key != "" && WorkspaceKey(k) == key) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Revoke forgets the approval of name in workspace (under every path
// filed for it, see [Store.Approve]) and saves the store. It reports
// whether there was one.
func (s *Store) Revoke(workspace, name string) (bool, error) {
	found := false
	err := s.update(func(d *storeFile) {
		for _, k := range filedFor(d, workspace) {
			if deleteServer(d, k, name) {
				found = true
			}
		}
	})
	return found, err
}

// Reset forgets every approval of workspace (under every path filed for
// it) and saves the store. It returns the names that were approved,
// sorted.
func (s *Store) Reset(workspace string) ([]string, error) {
	seen := map[string]bool{}
	err := s.update(func(d *storeFile) {
		for _, k := range filedFor(d, workspace) {
			for n := range d.Workspaces[k].Servers {
				seen[n] = true
			}
			delete(d.Workspaces, k)
		}
	})
	var names []string
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, err
}

// update re-reads the file, applies change and writes the result
// atomically. It refuses while the file is unusable.
//
// The file's lock ([filelock]) is held from the read to the rename, so
// that approvals written at once by other processes (parallel `mcp
// approve`, a gateway asking) are kept rather than overwritten.
func (s *Store) update(change func(*storeFile)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return approvalsFile.locked(s.path, func() error {
		data, err := readStore(s.path)
		if err != nil {
			s.err = err
			return err
		}
		change(&data)
		if err := writeStore(s.path, data); err != nil {
			return err
		}
		s.data, s.err = data, nil
		s.seen.Remember(s.path)
		return nil
	})
}

// locked runs f holding path's lock ([filelock]), the directory made
// first.
func (g guardedFile) locked(path string, f func() error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("saving the %s: %w", g.label, err)
	}
	unlock, err := filelock.Lock(path, filelock.DefaultTimeout)
	if err != nil {
		return fmt.Errorf("saving the %s: %w", g.label, err)
	}
	defer unlock()
	return f()
}

// readStore reads and checks the file; a missing file is an empty store.
func readStore(path string) (storeFile, error) {
	empty := storeFile{Version: storeVersion, Workspaces: map[string]*workspaceEntry{}}
	data, err := approvalsFile.read(path)
	if err != nil || data == nil {
		return empty, err
	}
	d, err := parseStore(data)
	if err != nil {
		return empty, approvalsFile.corrupt(path, err)
	}
	return d, nil
}

// guardedFile is how one of the package's stores names itself and its
// fail-closed consequence in the errors of reading it.
type guardedFile struct {
	// label names the file: "trust store".
	label string
	// consequence says what an unusable file means: "nothing is approved".
	consequence string
	// distrusted says what a file others can write loses: "its approvals".
	distrusted string
	// forgets says what deleting the file forgets: "every approval; you
	// will be asked again".
	forgets string
}

var approvalsFile = guardedFile{label: "trust store", consequence: "nothing is approved", distrusted: "its approvals",
	forgets: "every approval; you will be asked again"}

// fix is the fix of a file that is corrupt or not a file.
func (g guardedFile) fix(path string) string {
	return fmt.Sprintf("fix or delete %s (deleting it forgets %s)", path, g.forgets)
}

// read reads path as a store's file must be read: a regular file (safefile:
// no named pipe or device, at most 8 MiB), that only its owner can write,
// owned by the user running this program, in a directory that no other
// user can write (unless it has the sticky bit, as /tmp does: then others
// cannot remove or rename the user's files in it). A missing file is
// (nil, nil), but for the directory check: a file created later in such a
// directory could be anyone's.
//
// Ownership and the directory's mode are Unix checks; on Windows a
// user's profile directory has the user's ACL.
func (g guardedFile) read(path string) ([]byte, error) {
	if err := g.checkDir(path); err != nil {
		return nil, err
	}
	data, fi, err := safefile.Read(path, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if fi != nil && fi.IsDir() {
		return nil, fmt.Errorf("%s %s is a directory, not a file; %s (fix: %s)", g.label, path, g.consequence, g.fix(path))
	}
	if reason, fix, ok := safefile.Refused(err); ok {
		return nil, fmt.Errorf("%s %s cannot be read: %s; %s (fix: %s)", g.label, path, reason, g.consequence, fix)
	}
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s %s cannot be read: %v; %s (fix: make it readable by you)", g.label, path, err, g.consequence)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o022 != 0 {
		return nil, fmt.Errorf("%s %s can be written by other users (mode %04o), so %s are not trusted; %s (fix: chmod 600 %s)",
			g.label, path, fi.Mode().Perm(), g.distrusted, g.consequence, path)
	}
	if who := fileowner.Other(fi); who != "" {
		return nil, fmt.Errorf("%s %s belongs to another user, %s, who could have written it, so %s are not trusted; %s (fix: delete %s, which forgets %s)",
			g.label, path, who, g.distrusted, g.consequence, path, g.forgets)
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}

// checkDir refuses the directory of path when users other than its owner
// can write it and it has no sticky bit: any of them could replace the
// file (rename another over it) or create it.
func (g guardedFile) checkDir(path string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode()&fs.ModeSticky != 0 || fi.Mode().Perm()&0o022 == 0 {
		return nil // a missing directory holds no file; an unreadable one fails reading the file
	}
	return fmt.Errorf("%s %s is in %s, which other users can write (mode %04o), so they could replace it and %s are not trusted; %s (fix: chmod 700 %s)",
		g.label, path, dir, fi.Mode().Perm(), g.distrusted, g.consequence, dir)
}

// corrupt is the error of a file that does not parse.
func (g guardedFile) corrupt(path string, err error) error {
	return fmt.Errorf("%s %s is corrupt: %v; %s (fix: %s)", g.label, path, err, g.consequence, g.fix(path))
}

// write writes v to path atomically as indented JSON, mode 0600, creating
// the directory with mode 0700.
func (g guardedFile) write(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("saving the %s: %w", g.label, err)
	}
	// Not HTML-escaped: a pinned definition is kept byte for byte (its
	// digest is of those bytes).
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("saving the %s: %w", g.label, err)
	}
	if buf.Len() > safefile.MaxSize {
		// Its reader refuses a larger file, and a refused store fails
		// closed for everyone: what would outgrow it is not written.
		return fmt.Errorf("saving the %s: it would be %.1f MiB, more than the %d MiB it may hold; nothing was written",
			g.label, float64(buf.Len())/(1<<20), safefile.MaxSize>>20)
	}
	if err := atomicfile.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		return fmt.Errorf("saving the %s: %w", g.label, err)
	}
	return nil
}

// parseStore decodes and checks a store document.
func parseStore(data []byte) (storeFile, error) {
	var d storeFile
	if len(bytes.TrimSpace(data)) == 0 {
		return storeFile{Version: storeVersion, Workspaces: map[string]*workspaceEntry{}}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&d); err != nil {
		return storeFile{}, err
	}
	if dec.More() {
		return storeFile{}, errors.New("unexpected data after the JSON object")
	}
	if d.Version != storeVersion {
		return storeFile{}, fmt.Errorf("version %d is not %d (written by another Switchboard version?)", d.Version, storeVersion)
	}
	if d.Workspaces == nil {
		d.Workspaces = map[string]*workspaceEntry{}
	}
	for ws, e := range d.Workspaces {
		if e == nil || e.Servers == nil {
			return storeFile{}, fmt.Errorf("workspace %q has no \"servers\" object", ws)
		}
		for name, a := range e.Servers {
			if a == nil || !strings.HasPrefix(a.Fingerprint, "sha256:") || len(a.Fingerprint) != len("sha256:")+64 {
				return storeFile{}, fmt.Errorf("workspace %q: server %q has no valid fingerprint", ws, name)
			}
		}
	}
	return d, nil
}

// writeStore writes d to path atomically, mode 0600, creating the
// directory with mode 0700.
func writeStore(path string, d storeFile) error { return approvalsFile.write(path, d) }

func keys(m map[string]string) []string {
	if len(m) == 0 {
		return nil
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
