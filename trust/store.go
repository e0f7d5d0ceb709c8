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
	// Workspaces maps an absolute workspace root to its approvals.
	Workspaces map[string]*workspaceEntry `json:"workspaces"`
}

type workspaceEntry struct {
	Servers map[string]*Approval `json:"servers"`
}

// Store is the launch-trust store: approvals per workspace (absolute
// root) and server name, in <home>/trust.json (mode 0600 in a 0700
// directory). A Store is safe for concurrent use. Writes replace the file
// atomically (write a temporary file, then rename), after reading it again
// so that approvals made meanwhile by another process are kept.
//
// A file that cannot be read, does not parse, or can be written by other
// users fails closed: nothing is approved, [Store.Err] says why and how to
// fix it, and the store refuses to write over it (so nothing is lost).
type Store struct {
	path string

	mu   sync.Mutex
	data storeFile
	err  error
	// seen is the file as last read (nil: it did not exist), so that a
	// change made by another process is picked up (see refresh).
	seen os.FileInfo
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
	s.seen, _ = os.Stat(s.path)
	s.data, s.err = readStore(s.path)
}

// refreshLocked reads the file again if it is not the one last read: it
// was replaced (every write renames a new file in), changed or removed.
func (s *Store) refreshLocked() {
	fi, err := os.Stat(s.path)
	switch {
	case err != nil && s.seen == nil:
		return
	case err == nil && s.seen != nil && os.SameFile(fi, s.seen) &&
		fi.ModTime().Equal(s.seen.ModTime()) && fi.Size() == s.seen.Size() && fi.Mode() == s.seen.Mode():
		return
	}
	s.reloadLocked()
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

// Lookup returns the approval of a server in a workspace.
func (s *Store) Lookup(workspace, name string) (Approval, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refreshLocked()
	if s.err != nil {
		return Approval{}, false
	}
	ws := s.data.Workspaces[workspace]
	if ws == nil || ws.Servers[name] == nil {
		return Approval{}, false
	}
	return *ws.Servers[name], true
}

// Approved returns the names approved in a workspace, sorted.
func (s *Store) Approved(workspace string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refreshLocked()
	ws := s.data.Workspaces[workspace]
	if s.err != nil || ws == nil {
		return nil
	}
	names := make([]string, 0, len(ws.Servers))
	for n := range ws.Servers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Approve records rs's written definition as approved in workspace (an
// absolute path) at now, and saves the store.
func (s *Store) Approve(workspace string, rs *config.ResolvedServer, now time.Time) (Approval, error) {
	if workspace == "" || !filepath.IsAbs(workspace) {
		return Approval{}, fmt.Errorf("approving %s: the workspace must be an absolute path, not %q", rs.Name, workspace)
	}
	a := Approval{
		Fingerprint: Fingerprint(rs.Written),
		ApprovedAt:  now.UTC().Truncate(time.Second),
		Definition:  Summarize(rs.Written),
		Fields:      fieldDigests(rs.Written),
	}
	err := s.update(func(d *storeFile) {
		ws := d.Workspaces[workspace]
		if ws == nil {
			ws = &workspaceEntry{Servers: map[string]*Approval{}}
			d.Workspaces[workspace] = ws
		}
		ws.Servers[rs.Name] = &a
	})
	return a, err
}

// Revoke forgets the approval of name in workspace and saves the store. It
// reports whether there was one.
func (s *Store) Revoke(workspace, name string) (bool, error) {
	found := false
	err := s.update(func(d *storeFile) {
		if ws := d.Workspaces[workspace]; ws != nil && ws.Servers[name] != nil {
			found = true
			delete(ws.Servers, name)
			if len(ws.Servers) == 0 {
				delete(d.Workspaces, workspace)
			}
		}
	})
	return found, err
}

// Reset forgets every approval of workspace and saves the store. It
// returns the names that were approved, sorted.
func (s *Store) Reset(workspace string) ([]string, error) {
	var names []string
	err := s.update(func(d *storeFile) {
		if ws := d.Workspaces[workspace]; ws != nil {
			for n := range ws.Servers {
				names = append(names, n)
			}
			delete(d.Workspaces, workspace)
		}
	})
	sort.Strings(names)
	return names, err
}

// update re-reads the file, applies change and writes the result
// atomically. It refuses while the file is unusable.
func (s *Store) update(change func(*storeFile)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
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
	s.seen, _ = os.Stat(s.path)
	return nil
}

// storeFix is the fix of every unusable-store error.
func storeFix(path string) string {
	return fmt.Sprintf("fix or delete %s (deleting it forgets every approval; you will be asked again)", path)
}

// readStore reads and checks the file; a missing file is an empty store.
func readStore(path string) (storeFile, error) {
	empty := storeFile{Version: storeVersion, Workspaces: map[string]*workspaceEntry{}}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return empty, nil
	}
	if err == nil && fi.IsDir() {
		return empty, fmt.Errorf("trust store %s is a directory, not a file; nothing is approved (fix: %s)", path, storeFix(path))
	}
	if err == nil && runtime.GOOS != "windows" && fi.Mode().Perm()&0o022 != 0 {
		return empty, fmt.Errorf("trust store %s can be written by other users (mode %04o), so its approvals are not trusted; nothing is approved (fix: chmod 600 %s)",
			path, fi.Mode().Perm(), path)
	}
	var data []byte
	if err == nil {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return empty, fmt.Errorf("trust store %s cannot be read: %v; nothing is approved (fix: make it readable by you)", path, err)
	}
	d, err := parseStore(data)
	if err != nil {
		return empty, fmt.Errorf("trust store %s is corrupt: %v; nothing is approved (fix: %s)", path, err, storeFix(path))
	}
	return d, nil
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
func writeStore(path string, d storeFile) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("saving the trust store: %w", err)
	}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return fmt.Errorf("saving the trust store: %w", err)
	}
	b = append(b, '\n')
	tmp, err := os.CreateTemp(dir, ".trust-*.json")
	if err != nil {
		return fmt.Errorf("saving the trust store: %w", err)
	}
	name := tmp.Name()
	defer os.Remove(name) // after a successful rename there is nothing left to remove
	if err := tmp.Chmod(0o600); err != nil && runtime.GOOS != "windows" {
		tmp.Close()
		return fmt.Errorf("saving the trust store: %w", err)
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("saving the trust store: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("saving the trust store: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("saving the trust store: %w", err)
	}
	if err := os.Rename(name, path); err != nil {
		return fmt.Errorf("saving the trust store: %w", err)
	}
	return nil
}

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
