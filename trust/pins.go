package trust

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/safefile"
)

// PinsFileName is the tool pin store's file in the Switchboard home
// directory, beside [FileName].
const PinsFileName = "tool-pins.json"

// pinsVersion is the "version" of the pin file this package writes and
// reads; a file of a later version is refused, never rewritten.
const pinsVersion = 1

// Pin is what the pin store keeps about one tool of one server in one
// workspace: the digest of its definition when it was pinned.
type Pin struct {
	// Digest is [DefinitionDigest] of the pinned definition.
	Digest string `json:"digest"`
	// PinnedAt is when it was pinned (first seen, or accepted), UTC.
	PinnedAt time.Time `json:"pinnedAt"`
}

// pinsFile is the JSON document of tool-pins.json. Definitions are kept
// once by digest, however many workspaces pin them.
type pinsFile struct {
	Version int `json:"version"`
	// Workspaces maps a workspace's key ([WorkspaceKey]; "" for a run
	// without a workspace) to its servers' pins.
	Workspaces map[string]*pinnedWorkspace `json:"workspaces"`
	// Definitions maps each pinned digest to its definition.
	Definitions map[string]json.RawMessage `json:"definitions"`
}

type pinnedWorkspace struct {
	// Servers maps a server name to its tools' pins by tool name. A server
	// with an empty map was seen with no tools.
	Servers map[string]map[string]Pin `json:"servers"`
	// Prompts maps a server name to its prompts' pins by prompt name, as
	// Servers does its tools'. Files written before prompts were pinned
	// have none: each server's prompts are then pinned on first sight.
	// The file's version stays 1: a Switchboard of before ignores the key
	// (it decodes without DisallowUnknownFields) rather than refusing the
	// whole file, and drops it when it writes the file (the prompts are
	// then pinned afresh, as on first sight, by the next one that pins
	// them).
	Prompts map[string]map[string]Pin `json:"prompts,omitempty"`
}

// DefinitionDigest is the digest a pin keeps of a tool's definition (the
// canonical, compact JSON toolsurface.Definition gives): "sha256:" and the
// hex SHA-256 of def.
func DefinitionDigest(def []byte) string {
	sum := sha256.Sum256(def)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// PinStore keeps the tool definitions pinned per workspace and server in
// <home>/tool-pins.json (mode 0600 in a 0700 directory), beside the launch
// approvals and kept the same way: writes take the file's lock, read it
// again, apply the change and replace it atomically, so processes pinning
// at once keep each other's pins; a change made by another process (a
// `switchboard tools accept` while a gateway runs) is read before the
// next answer. It is safe for concurrent use.
//
// A file that cannot be read, does not parse, is of a later version, or
// can be written by other users fails closed: [PinStore.Err] says why and
// how to fix it, no tool counts as pinned, and the store refuses to write
// over the file, so nothing in it is lost.
type PinStore struct {
	path string

	mu   sync.Mutex
	data pinsFile
	err  error
	seen safefile.Seen
	gen  uint64
}

var pinsGuard = guardedFile{label: "tool pin store", consequence: "no tool is served until it is fixed",
	distrusted: "its pins", forgets: "every pinned tool definition: each server's tools are pinned again as they are now"}

// OpenPins reads the pin store of the Switchboard home directory home.
// It never fails: a missing file is an empty store, and a bad one is
// reported by [PinStore.Err].
func OpenPins(home string) *PinStore {
	p := &PinStore{path: filepath.Join(home, PinsFileName)}
	p.mu.Lock()
	p.reloadLocked()
	p.mu.Unlock()
	return p
}

func (p *PinStore) reloadLocked() {
	p.seen.Remember(p.path)
	p.data, p.err = readPins(p.path)
	p.gen++
}

func (p *PinStore) refreshLocked() {
	if p.seen.Changed(p.path) {
		p.reloadLocked()
	}
}

// Path is the store's file.
func (p *PinStore) Path() string { return p.path }

// Err reports why the store's file cannot be used (nil when it can, or
// does not exist yet). The message is one line naming the file, with a
// fix.
func (p *PinStore) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refreshLocked()
	return p.err
}

// Generation changes whenever the pins may have: the file was read again
// (another process wrote it) or written. A caller may keep what it
// decided from the pins while the generation stays the same.
func (p *PinStore) Generation() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refreshLocked()
	return p.gen
}

// pinsKey is the key of a workspace in the file: [WorkspaceKey], or ""
// without one.
func pinsKey(workspace string) string {
	if workspace == "" {
		return ""
	}
	return WorkspaceKey(workspace)
}

// Server returns a copy of the pins of server in workspace, by tool name,
// and whether the server was ever pinned there. While the store is
// unusable (Err) nothing is pinned.
func (p *PinStore) Server(workspace, server string) (map[string]Pin, bool) {
	key := pinsKey(workspace)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refreshLocked()
	if p.err != nil {
		return nil, false
	}
	ws := p.data.Workspaces[key]
	if ws == nil {
		return nil, false
	}
	tools, ok := ws.Servers[server]
	if !ok {
		return nil, false
	}
	out := make(map[string]Pin, len(tools))
	for k, v := range tools {
		out[k] = v
	}
	return out, true
}

// Prompts returns a copy of the pins of server's prompts in workspace, by
// prompt name, and whether the server's prompts were ever pinned there,
// as [PinStore.Server] does for its tools.
func (p *PinStore) Prompts(workspace, server string) (map[string]Pin, bool) {
	key := pinsKey(workspace)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refreshLocked()
	if p.err != nil {
		return nil, false
	}
	ws := p.data.Workspaces[key]
	if ws == nil {
		return nil, false
	}
	prompts, ok := ws.Prompts[server]
	if !ok {
		return nil, false
	}
	out := make(map[string]Pin, len(prompts))
	for k, v := range prompts {
		out[k] = v
	}
	return out, true
}

// Definition returns the pinned definition of a digest.
func (p *PinStore) Definition(digest string) (json.RawMessage, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	def, ok := p.data.Definitions[digest]
	return def, ok
}

// MaxServerPins bounds the definitions (their JSON) one server's pins in
// one workspace may hold, those of tools it no longer offers included:
// the store is one file that its reader refuses past 8 MiB, and a store
// that is refused fails closed for every server, so no one server may
// fill it, at once or a little at each listing. A server whose tools are
// larger is not pinned, and so not served.
const MaxServerPins = 2 << 20

// Pin records defs (tool name → canonical definition) as the pinned
// definitions of those tools of server in workspace, at now, and saves the
// store; the server's other pins stay. Pinning no tools records that the
// server was seen with none. It refuses while the file is unusable, and
// when the server's pins in workspace would hold more than MaxServerPins.
func (p *PinStore) Pin(workspace, server string, defs map[string]json.RawMessage, now time.Time) error {
	return p.pin(workspace, server, "tools", defs, now, func(ws *pinnedWorkspace) map[string]map[string]Pin {
		return ws.Servers
	})
}

// PinPrompts records defs (prompt name → canonical definition) as the
// pinned definitions of those prompts of server in workspace, as
// [PinStore.Pin] does for tools; a server's prompts may hold up to
// MaxServerPins of their own.
func (p *PinStore) PinPrompts(workspace, server string, defs map[string]json.RawMessage, now time.Time) error {
	return p.pin(workspace, server, "prompts", defs, now, func(ws *pinnedWorkspace) map[string]map[string]Pin {
		if ws.Prompts == nil {
			ws.Prompts = map[string]map[string]Pin{}
		}
		return ws.Prompts
	})
}

// pin is Pin and PinPrompts: kind names what is pinned ("tools",
// "prompts") and of picks its map in a workspace.
func (p *PinStore) pin(workspace, server, kind string, defs map[string]json.RawMessage, now time.Time, of func(*pinnedWorkspace) map[string]map[string]Pin) error {
	if workspace != "" && !filepath.IsAbs(workspace) {
		return fmt.Errorf("pinning the %s of %s: the workspace must be an absolute path, not %q", kind, server, workspace)
	}
	size := 0
	for _, def := range defs {
		size += len(def)
	}
	if size > MaxServerPins {
		return fmt.Errorf("the definitions of %s's %s are %.1f MiB, more than the %d MiB one server's pins may hold; they are not pinned",
			server, kind, float64(size)/(1<<20), MaxServerPins>>20)
	}
	key := pinsKey(workspace)
	at := now.UTC().Truncate(time.Second)
	return p.update(func(d *pinsFile) error {
		ws := d.Workspaces[key]
		if ws == nil {
			ws = &pinnedWorkspace{Servers: map[string]map[string]Pin{}}
			d.Workspaces[key] = ws
		}
		m := of(ws)
		items := m[server]
		if items == nil {
			items = map[string]Pin{}
			m[server] = items
		}
		for name, def := range defs {
			var c bytes.Buffer
			if json.Compact(&c, def) != nil {
				c.Reset()
				b, _ := json.Marshal(string(def)) // not JSON: kept as a string
				c.Write(b)
			}
			digest := DefinitionDigest(c.Bytes())
			items[name] = Pin{Digest: digest, PinnedAt: at}
			d.Definitions[digest] = c.Bytes()
		}
		// With the pins it has already: a server that offers other
		// tools at each listing (each pinned, as "accept" does) would
		// otherwise add up to the whole file.
		held, seen := 0, map[string]bool{}
		for _, pin := range items {
			if !seen[pin.Digest] {
				seen[pin.Digest] = true
				held += len(d.Definitions[pin.Digest])
			}
		}
		if held > MaxServerPins {
			return fmt.Errorf("with those of the %s %s offered before, the definitions of its %s are %.1f MiB, more than the %d MiB one server's pins may hold; they are not pinned",
				kind, server, kind, float64(held)/(1<<20), MaxServerPins>>20)
		}
		return nil
	})
}

// Forget removes every pin of server in workspace (all its servers when
// server is ""), its prompts' too, and saves the store: the next listing
// pins afresh. It reports whether there were any.
func (p *PinStore) Forget(workspace, server string) (bool, error) {
	key := pinsKey(workspace)
	found := false
	err := p.update(func(d *pinsFile) error {
		ws := d.Workspaces[key]
		if ws == nil {
			return nil
		}
		if server == "" {
			found = len(ws.Servers) > 0 || len(ws.Prompts) > 0
			delete(d.Workspaces, key)
			return nil
		}
		if _, ok := ws.Servers[server]; ok {
			found = true
			delete(ws.Servers, server)
		}
		if _, ok := ws.Prompts[server]; ok {
			found = true
			delete(ws.Prompts, server)
		}
		if len(ws.Servers) == 0 && len(ws.Prompts) == 0 {
			delete(d.Workspaces, key)
		}
		return nil
	})
	return found, err
}

// update re-reads the file under its lock, applies change, drops the
// definitions no pin refers to any more, and writes it atomically. When
// change fails nothing is written.
func (p *PinStore) update(change func(*pinsFile) error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return pinsGuard.locked(p.path, func() error {
		d, err := readPins(p.path)
		if err != nil {
			p.err = err
			return err
		}
		if err := change(&d); err != nil {
			return err
		}
		used := map[string]bool{}
		for _, ws := range d.Workspaces {
			for _, m := range []map[string]map[string]Pin{ws.Servers, ws.Prompts} {
				for _, items := range m {
					for _, pin := range items {
						used[pin.Digest] = true
					}
				}
			}
		}
		for digest := range d.Definitions {
			if !used[digest] {
				delete(d.Definitions, digest)
			}
		}
		if err := pinsGuard.write(p.path, d); err != nil {
			return err
		}
		p.data, p.err = d, nil
		p.seen.Remember(p.path)
		p.gen++
		return nil
	})
}

// readPins reads and checks the file; a missing file is an empty store.
func readPins(path string) (pinsFile, error) {
	empty := pinsFile{Version: pinsVersion, Workspaces: map[string]*pinnedWorkspace{}, Definitions: map[string]json.RawMessage{}}
	data, err := pinsGuard.read(path)
	if err != nil || data == nil {
		return empty, err
	}
	d, err := parsePins(data)
	if err != nil {
		return empty, pinsGuard.corrupt(path, err)
	}
	return d, nil
}

// errNewerPins marks a file of a later version.
var errNewerPins = errors.New("written by a newer version of Switchboard")

// parsePins decodes and checks a pin document: every pin's definition is
// there and hashes to its digest.
func parsePins(data []byte) (pinsFile, error) {
	d := pinsFile{Version: pinsVersion, Workspaces: map[string]*pinnedWorkspace{}, Definitions: map[string]json.RawMessage{}}
	// Switchboard never writes an empty file, nor one without its three
	// keys (a file that does not exist is the store without pins). Such a
	// file was cut short or written by someone else, and read as a store
	// without pins it would pin every server's tools afresh, as they are.
	if len(bytes.TrimSpace(data)) == 0 {
		return d, errors.New("it is empty (cut short?)")
	}
	var head struct {
		Version     *int            `json:"version"`
		Workspaces  json.RawMessage `json:"workspaces"`
		Definitions json.RawMessage `json:"definitions"`
	}
	if err := json.Unmarshal(data, &head); err == nil {
		if head.Version != nil && *head.Version > pinsVersion {
			return d, fmt.Errorf("version %d is %w (this one reads version %d)", *head.Version, errNewerPins, pinsVersion)
		}
		missing := ""
		switch {
		case head.Version == nil:
			missing = "version"
		case head.Workspaces == nil || string(head.Workspaces) == "null":
			missing = "workspaces"
		case head.Definitions == nil || string(head.Definitions) == "null":
			missing = "definitions"
		}
		if missing != "" {
			return d, fmt.Errorf("it has no %q (cut short?)", missing)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&d); err != nil {
		return d, err
	}
	if dec.More() {
		return d, errors.New("unexpected data after the JSON object")
	}
	if d.Version != pinsVersion {
		return d, fmt.Errorf("version %d is not %d", d.Version, pinsVersion)
	}
	if d.Workspaces == nil {
		d.Workspaces = map[string]*pinnedWorkspace{}
	}
	if d.Definitions == nil {
		d.Definitions = map[string]json.RawMessage{}
	}
	for digest, def := range d.Definitions {
		// The file is indented; a definition is digested compact.
		var c bytes.Buffer
		if err := json.Compact(&c, def); err != nil {
			return d, err
		}
		def = c.Bytes()
		d.Definitions[digest] = def
		if DefinitionDigest(def) != digest {
			return d, fmt.Errorf("the definition filed under %s does not have that digest", short(digest))
		}
	}
	wss := make([]string, 0, len(d.Workspaces))
	for ws := range d.Workspaces {
		wss = append(wss, ws)
	}
	sort.Strings(wss) // the first problem is the same on every read
	for _, ws := range wss {
		e := d.Workspaces[ws]
		if e == nil || e.Servers == nil {
			return d, fmt.Errorf("workspace %q has no \"servers\" object", ws)
		}
		for server, tools := range e.Servers {
			if tools == nil {
				return d, fmt.Errorf("workspace %q: server %q has no tools object", ws, server)
			}
			for tool, pin := range tools {
				if _, ok := d.Definitions[pin.Digest]; !ok {
					return d, fmt.Errorf("workspace %q: tool %q of server %q is pinned to %s, whose definition is missing", ws, tool, server, short(pin.Digest))
				}
			}
		}
		for server, prompts := range e.Prompts {
			if prompts == nil {
				return d, fmt.Errorf("workspace %q: server %q has no prompts object", ws, server)
			}
			for prompt, pin := range prompts {
				if _, ok := d.Definitions[pin.Digest]; !ok {
					return d, fmt.Errorf("workspace %q: prompt %q of server %q is pinned to %s, whose definition is missing", ws, prompt, server, short(pin.Digest))
				}
			}
		}
	}
	return d, nil
}

// short cuts a digest for a message.
func short(digest string) string {
	if len(digest) > len("sha256:")+12 && strings.HasPrefix(digest, "sha256:") {
		return digest[:len("sha256:")+12]
	}
	return fmt.Sprintf("%q", digest)
}
