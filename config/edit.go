package config

// This file is the writing side of the package: the edits the management
// CLI makes (mcp add, add-json, remove, enable, disable, import). Every edit
// parses the file as JSONC with hujson, applies a JSON Patch (RFC 6902) to
// the syntax tree and packs it again, so that a user's comments, trailing
// commas, key order and unrelated keys survive byte for byte outside the
// entry that changed. The whole file is never re-marshalled.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/tailscale/hujson"

	"github.com/switchboard-mcp/switchboard/internal/filelock"
	"github.com/switchboard-mcp/switchboard/internal/fileowner"
	"github.com/switchboard-mcp/switchboard/internal/safefile"
)

// Modes of what an edit creates. Files in the home directory can hold
// secrets (env values, headers), so they and their directories are private.
const (
	privateFileMode fs.FileMode = 0o600
	privateDirMode  fs.FileMode = 0o700
	sharedFileMode  fs.FileMode = 0o644
	sharedDirMode   fs.FileMode = 0o755
)

// SetServer writes the server definition def under name in the object at
// objPath of the JSONC file at path: objPath is e.g. ["mcpServers"] or
// ["projects", absWorkspace, "mcpServers"]. An existing entry of that name
// is replaced in place; a new one is appended to the object. Missing parent
// objects are created, and so is a missing file (mode 0600, missing
// directories 0700, since a server's env and headers may hold secrets).
//
// Only the changed entry is rewritten: everything else in the file keeps its
// bytes. def must be one JSON object; it is re-indented to match the file.
// The file is replaced atomically and keeps its mode. A file that does not
// parse is left untouched and the error is a [Diagnostic] with
// file:line:col.
//
// SetServer, [RemoveServer] and [SetWorkspaceEnablement] are safe to call
// at once from several goroutines and processes: edits of one file take
// turns (waiting at most 10s for the file's lock, then failing with an
// error naming the file), so that none is lost.
func SetServer(path string, objPath []string, name string, def json.RawMessage) error {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(def, &probe); err != nil {
		return fmt.Errorf("server %q: definition must be a JSON object: %w", name, err)
	}
	full := append(append([]string(nil), objPath...), name)
	for _, k := range full {
		// JSON strings are UTF-8: such a key could not be read back.
		if !utf8.ValidString(k) {
			return fmt.Errorf("%q is not valid UTF-8 and cannot be a JSON key", k)
		}
	}
	return editFile(path, privateFileMode, privateDirMode, func(root *hujson.Value, src []byte) error {
		if err := uniquePaths(root, full); err != nil {
			return err
		}
		return setValue(root, src, full, def)
	})
}

// RemoveServer deletes the entry name from the object at objPath of the
// JSONC file at path, together with the comments that belong to it. When
// objPath is nested (a local-scope ["projects", ws, "mcpServers"]), the
// parents left empty, without comments, are removed too, so that adding
// and then removing a server gives back the file it started from. found is
// false (and the file untouched) when the file, the object or the entry
// does not exist.
func RemoveServer(path string, objPath []string, name string) (found bool, err error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	full := append(append([]string(nil), objPath...), name)
	err = editFile(path, privateFileMode, privateDirMode, func(root *hujson.Value, src []byte) error {
		if err := uniquePaths(root, full); err != nil {
			return err
		}
		found = root.Find(pointer(full)) != nil
		if !found {
			return errNoChange
		}
		if err := removeMember(root, full); err != nil {
			return err
		}
		// Undo what SetServer creates: the nested parents of a local-scope
		// entry go once empty. A top-level "mcpServers" stays.
		for k := len(objPath); k >= 1 && len(objPath) > 1; k-- {
			v := root.Find(pointer(objPath[:k]))
			obj, ok := v.Value.(*hujson.Object)
			if !ok || len(obj.Members) > 0 || len(bytes.TrimSpace(obj.AfterExtra)) > 0 {
				break
			}
			if err := removeMember(root, objPath[:k]); err != nil {
				return err
			}
		}
		return nil
	})
	return found, err
}

// HasServer reports whether the JSONC file at path holds an entry name in
// the object at objPath. A missing file holds nothing; a file that does not
// parse is an error ([Diagnostic] with file:line:col).
func HasServer(path string, objPath []string, name string) (bool, error) {
	v, err := parseExisting(path)
	if v == nil || err != nil {
		return false, err
	}
	full := append(append([]string(nil), objPath...), name)
	return v.Find(pointer(full)) != nil, nil
}

// SetWorkspaceEnablement records in <root>/.switchboard/workspace.json that
// the server name is enabled (or disabled) for this workspace: name is
// added to one of "enabledMcpServers" / "disabledMcpServers" (if absent) and
// removed from the other. The file and its directory are created when
// missing. Calling it twice with the same arguments changes nothing.
//
// The workspace file belongs to the repository: its enable lifts only what
// the repository itself disabled (see [Load]). To record the user's own
// choice, which may lift anything but managed policy, use
// [SetLocalEnablement]. It refuses to write through a symbolic link that
// leaves root ([CheckRepoFile]).
func SetWorkspaceEnablement(root, name string, enabled bool) error {
	path := WorkspaceFile(root)
	if err := CheckRepoFile(root, path); err != nil {
		return err
	}
	// Workspace enablement lists names only; it lives in the repository, so
	// a file it creates gets the usual shared modes.
	return setEnablement(path, nil, name, enabled, sharedFileMode, sharedDirMode)
}

// SetLocalEnablement records the user's own choice that the server name is
// enabled (or disabled) in the workspace whose local entry is at
// ["projects", key] of the user file at path (key as [ProjectKey] or an
// existing entry [MatchProjectKeys] found): name is added to that entry's
// "enabledMcpServers" or "disabledMcpServers" and removed from the other.
// This layer lives in the home directory, so, unlike the repository's
// workspace file, it can switch back on what any file disabled (managed
// policy aside). A new file is private (0600).
func SetLocalEnablement(path, key, name string, enabled bool) error {
	return setEnablement(path, []string{"projects", key}, name, enabled, privateFileMode, privateDirMode)
}

// ClearLocalEnablement takes the server name out of both lists of the
// workspace's local entry (see [SetLocalEnablement]), dropping what that
// empties: the user's own choice for it is forgotten, and the files'
// decide again.
func ClearLocalEnablement(path, key, name string) error {
	objPath := []string{"projects", key}
	return editFile(path, privateFileMode, privateDirMode, func(v *hujson.Value, _ []byte) error {
		if err := uniquePaths(v, append(append([]string(nil), objPath...), "enabledMcpServers"),
			append(append([]string(nil), objPath...), "disabledMcpServers")); err != nil {
			return err
		}
		dropped := 0
		for _, list := range []string{"enabledMcpServers", "disabledMcpServers"} {
			n, err := dropListed(v, append(append([]string(nil), objPath...), list), name)
			if err != nil {
				return err
			}
			dropped += n
		}
		if dropped == 0 {
			return errNoChange
		}
		return nil
	})
}

// dropListed takes name out of the list at path, if there is one (a
// value there that is not an array is left to the loader to report), and
// the list out if that empties it. It returns how many it took out.
func dropListed(v *hujson.Value, path []string, name string) (int, error) {
	if _, ok := arrayAt(v, path); !ok {
		return 0, nil
	}
	n, err := dropString(v, path, name)
	if err != nil || n == 0 {
		return n, err
	}
	return n, pruneEmptied(v, path)
}

// setEnablement is the edit of both layers: the lists live in the object
// at objPath (nil: the top level).
func setEnablement(path string, objPath []string, name string, enabled bool, fileMode, dirMode fs.FileMode) error {
	add, drop := "enabledMcpServers", "disabledMcpServers"
	if !enabled {
		add, drop = drop, add
	}
	at := func(key string) []string { return append(append([]string(nil), objPath...), key) }
	return editFile(path, fileMode, dirMode, func(v *hujson.Value, src []byte) error {
		if err := uniquePaths(v, at(add), at(drop)); err != nil {
			return err
		}
		// The other list is left alone when it is not an array (the
		// loader reports it); emptied, it goes.
		dropped, err := dropListed(v, at(drop), name)
		if err != nil {
			return err
		}
		if err := addString(v, src, at(add), name); err != errNoChange || dropped == 0 {
			return err
		}
		return nil
	})
}

// resolveForWrite returns where a write to path would land: the deepest
// existing part of the path with its links resolved, then the rest, a
// dangling link followed to the file it would create. ok is false for a
// chain of links too long to follow.
func resolveForWrite(path string) (string, bool) {
	for hops := 0; hops < 40; hops++ {
		probe, rest := path, ""
		for {
			if _, err := os.Lstat(probe); err == nil {
				break
			}
			parent := filepath.Dir(probe)
			if parent == probe {
				return path, true
			}
			rest = filepath.Join(filepath.Base(probe), rest)
			probe = parent
		}
		if real, err := filepath.EvalSymlinks(probe); err == nil {
			return filepath.Join(real, rest), true
		}
		// probe exists but does not resolve: a dangling link (its parents
		// resolve, or probe's parent would have been the deepest part).
		target, err := os.Readlink(probe)
		if err != nil {
			return "", false
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(probe), target)
		}
		path = filepath.Join(target, rest)
	}
	return "", false
}

// LinkOutError is the refusal to write a repository file that is a
// symbolic link (or lies under one) leading out of the repository. It
// names the path in the repository, never the link's target.
type LinkOutError struct {
	Path string // the file as it sits in the repository
}

func (e *LinkOutError) Error() string {
	return fmt.Sprintf("%s is reached through a symbolic link that leads out of the repository; switchboard does not write through it", e.Path)
}

// CheckRepoFile returns a [*LinkOutError] when writing path, a file of the
// repository at root (its .mcp.json, .switchboard/workspace.json), would
// write somewhere outside root: the file, or a directory on its way, is a
// symbolic link whose target lies elsewhere. A repository must not be able
// to point an edit made for it at the user's own files. A link that stays
// inside root is followed as usual. Nil for a path outside root (not a
// repository file) and for a path that does not exist yet under a
// directory that resolves inside root.
func CheckRepoFile(root, path string) error {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil // no root to escape from; the write fails on its own
	}
	rel, err := filepath.Rel(filepath.Clean(root), filepath.Clean(path))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil
	}
	real, ok := resolveForWrite(filepath.Clean(path))
	if !ok {
		return &LinkOutError{Path: path}
	}
	if r, err := filepath.Rel(realRoot, real); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return &LinkOutError{Path: path}
	}
	return nil
}

// errNoChange tells editFile that the edit found nothing to do.
var errNoChange = errors.New("no change")

// wrongKindError is the refusal of an edit that meets, on its way, a value
// that is not the object or array it must be ("mcpServers": null).
type wrongKindError struct {
	path []string
	want string // "an object" or "an array"
}

func (e *wrongKindError) Error() string { return fmt.Sprintf("%s is not %s", pointer(e.path), e.want) }

// diagnostic places the error in text, the file at path as it was read:
// the value was there before the edit changed anything.
func (e *wrongKindError) diagnostic(path string, text []byte) Diagnostic {
	d := Diagnostic{
		Severity: SeverityError, Position: Position{File: path},
		Message: fmt.Sprintf("%q is not %s", e.path[len(e.path)-1], e.want),
		Fix:     "write {} there, or remove the member; the file was not changed",
	}
	if e.want == "an array" {
		d.Fix = "write a list there, e.g. [], or remove the member; the file was not changed"
	}
	if v, err := hujson.Parse(text); err == nil {
		if at := v.Find(pointer(e.path)); at != nil {
			d.Position = posAt(path, text, at.StartOffset)
			d.Message = fmt.Sprintf("%q is %s, not %s", e.path[len(e.path)-1], kindName(at), e.want)
		}
	}
	return d
}

// duplicateKeyError is the refusal of an edit whose path goes through a
// name written twice in one object: offset is the last one's, which the
// loader uses, first the first one's, which a JSON Pointer finds.
type duplicateKeyError struct {
	key           string
	offset, first int
}

func (e *duplicateKeyError) Error() string { return fmt.Sprintf("%q is written more than once", e.key) }

// uniquePaths returns a *duplicateKeyError when a name on one of paths is
// written more than once in its object. The loader reads the last of
// them, as JSON decoders do; an edit finds the first, and would change a
// copy that is not used (replace it and leave the server as it was,
// remove it and leave the server running). It must run before the edit
// changes anything: it reports the offsets the parse gave.
func uniquePaths(root *hujson.Value, paths ...[]string) error {
	for _, path := range paths {
		cur := root
		for _, key := range path {
			obj, ok := cur.Value.(*hujson.Object)
			if !ok {
				break
			}
			var found []*hujson.ObjectMember
			for i := range obj.Members {
				if memberName(&obj.Members[i]) == key {
					found = append(found, &obj.Members[i])
				}
			}
			if len(found) == 0 {
				break
			}
			if len(found) > 1 {
				return &duplicateKeyError{key: key, offset: found[len(found)-1].Name.StartOffset, first: found[0].Name.StartOffset}
			}
			cur = &found[0].Value
		}
	}
	return nil
}

// editFile reads the JSONC file at path (a missing or blank file reads as
// {}), lets edit patch its syntax tree, and writes the result atomically. A
// new file gets fileMode (and missing directories dirMode); an existing
// one keeps its mode.
//
// The whole read-modify-write holds the file's lock ([filelock]), so that
// edits made at once by several processes (setup scripts adding servers
// in parallel, the CLI beside another tool) all survive instead of the
// last rename dropping the others.
func editFile(path string, fileMode, dirMode fs.FileMode, edit func(v *hujson.Value, src []byte) error) error {
	// Edit the file a symlink points to, rather than replacing the link;
	// a link to a file not made yet (a dotfiles checkout's) creates it.
	real, ok := resolveForWrite(path)
	if !ok {
		return fmt.Errorf("writing %s: too many symbolic links on the way", path)
	}
	path = real
	// The lock file lives beside the file, so its directory must exist
	// first; a new file is about to be written there anyway.
	if _, err := os.Stat(filepath.Dir(path)); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(path), dirMode); err != nil {
			return fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
		}
	}
	unlock, err := filelock.Lock(path, filelock.DefaultTimeout)
	if errors.Is(err, fs.ErrPermission) {
		return folderNotWritable(path)
	}
	if err != nil {
		return err
	}
	defer unlock()
	src, err := readConfigFile(path)
	exists := true
	switch {
	case errors.Is(err, fs.ErrNotExist):
		exists = false
	case err != nil:
		return err
	}
	mode := fileMode
	var orig fs.FileInfo // the file replaced, nil for a new one
	if exists {
		if orig, err = os.Stat(path); err != nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
		mode = orig.Mode().Perm()
	}

	text, mark := StripBOM(src)
	switch {
	case len(bytes.TrimSpace(text)) == 0:
		// A new or blank file: start from an empty object, keeping any
		// whitespace the blank file held out of the way.
		text = []byte("{}\n")
	case onlyComments(text):
		// A file of comments only: the object goes below them.
		text = append([]byte(nil), text...)
		if !bytes.HasSuffix(text, []byte("\n")) {
			text = append(text, '\n')
		}
		text = append(text, "{}\n"...)
	}
	v, err := parseJSONCFile(path, text)
	if err != nil {
		return err
	}
	if _, ok := v.Value.(*hujson.Object); !ok {
		return Diagnostic{
			Severity: SeverityError,
			Position: Position{File: path, Line: 1, Col: 1},
			Message:  "the top level is not a JSON object",
			Fix:      "make the file one JSON object, e.g. {\"mcpServers\": {}}; it was not changed",
		}
	}
	if err := edit(&v, text); err != nil {
		if errors.Is(err, errNoChange) {
			return nil
		}
		var wrong *wrongKindError
		if errors.As(err, &wrong) {
			return wrong.diagnostic(path, text)
		}
		var dup *duplicateKeyError
		if errors.As(err, &dup) {
			first, _ := LineCol(text, dup.first)
			return Diagnostic{
				Severity: SeverityError,
				Position: posAt(path, text, dup.offset),
				Message:  fmt.Sprintf("%q is written more than once in this object (also at line %d), and only the last one is used; an edit cannot tell which one you mean", dup.key, first),
				Fix:      "remove the copy you do not want, then run the command again; the file was not changed",
			}
		}
		return fmt.Errorf("editing %s: %w", path, err)
	}
	out := v.Pack()
	if !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, '\n')
	}
	if mark != nil {
		out = append(append([]byte(nil), mark...), out...)
	}
	// A file written with CRLF line ends (Windows editors) keeps them:
	// the new lines are laid out with "\n" only.
	if n := bytes.Count(src, []byte("\r\n")); n > 0 && n == bytes.Count(src, []byte("\n")) {
		out = toCRLF(out)
	}
	if exists && bytes.Equal(out, src) {
		return nil
	}
	// The rename an edit ends with needs only the folder to be writable:
	// a file the user made read-only would be replaced.
	if exists && mode&0o200 == 0 {
		return Diagnostic{
			Severity: SeverityError, Position: Position{File: path},
			Message: fmt.Sprintf("is read-only (mode %#o), so switchboard does not change it", mode),
			Fix:     fmt.Sprintf("make it writable (chmod u+w %s), then run the command again; the file was not changed", path),
		}
	}
	err = writeFileAtomic(path, out, mode, orig)
	if errors.Is(err, fs.ErrPermission) {
		return folderNotWritable(path)
	}
	return err
}

// folderNotWritable is the refusal of an edit of path whose folder the
// user cannot write: the lock and the new copy are made beside the file.
func folderNotWritable(path string) Diagnostic {
	dir := filepath.Dir(path)
	return Diagnostic{
		Severity: SeverityError, Position: Position{File: path},
		Message: fmt.Sprintf("cannot be changed: its folder %s is not writable by you (an edit writes its lock and the new file there, then renames it over this one)", dir),
		Fix:     fmt.Sprintf("make the folder writable (chmod u+w %s), then run the command again; the file was not changed", dir),
	}
}

// toCRLF turns every "\n" not already preceded by "\r" into "\r\n".
func toCRLF(b []byte) []byte {
	var out bytes.Buffer
	for i, c := range b {
		if c == '\n' && (i == 0 || b[i-1] != '\r') {
			out.WriteByte('\r')
		}
		out.WriteByte(c)
	}
	return out.Bytes()
}

// readConfigFile reads a config file for editing. A missing file is
// fs.ErrNotExist; a directory or an unreadable file is a [Diagnostic]
// naming the file and the fix.
func readConfigFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err == nil && fi.IsDir() {
		return nil, Diagnostic{
			Severity: SeverityError, Position: Position{File: path},
			Message: "is a directory, not a JSON file",
			Fix:     "remove or rename the directory: this path must be a JSON file",
		}
	}
	src, err := safefile.ReadFile(path)
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return src, err
	}
	if reason, fix, ok := safefile.Refused(err); ok {
		return nil, Diagnostic{
			Severity: SeverityError, Position: Position{File: path},
			Message: "cannot be read: " + reason, Fix: fix,
		}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return nil, Diagnostic{
		Severity: SeverityError, Position: Position{File: path},
		Message: "cannot be read: " + err.Error(),
		Fix:     fmt.Sprintf("make it readable by you (e.g. chmod 600 %s)", path),
	}
}

// writeFileAtomic replaces path with data through a temporary file in the
// same directory and a rename, so that a crash never leaves half a file.
// The new file gets mode and, where the system allows it, the owner and
// group of orig, the file it replaces (nil: none).
func writeFileAtomic(path string, data []byte, mode fs.FileMode, orig fs.FileInfo) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err = f.Chmod(mode); err != nil {
		// Chmod on a file is not supported everywhere (e.g. some Windows
		// file systems); the rename below still keeps the data safe.
		err = nil
	}
	if orig != nil {
		// Root editing a user's file (sudo) must leave it the user's:
		// a private file of root's is one they can no longer read.
		_ = fileowner.Keep(f, orig)
	}
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

var hujsonPosRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^hujson: line (\d+), column (\d+): (.*)$`)
})

// ParseDiagnostic turns an error of hujson.Parse on the file at path into a
// Diagnostic naming the file, line and column.
func ParseDiagnostic(path string, err error) Diagnostic {
	d := Diagnostic{
		Severity: SeverityError,
		Position: Position{File: path},
		Message:  "invalid JSONC: " + err.Error(),
		Fix:      "correct the syntax at that position; the file was not changed",
	}
	if m := hujsonPosRE().FindStringSubmatch(err.Error()); m != nil {
		d.Line, _ = strconv.Atoi(m[1])
		d.Col, _ = strconv.Atoi(m[2])
		d.Message = "invalid JSONC: " + m[3]
	}
	return d
}

// pointer renders path as a JSON Pointer (RFC 6901), escaping "~" and "/".
func pointer(path []string) string {
	var b strings.Builder
	for _, p := range path {
		b.WriteByte('/')
		p = strings.ReplaceAll(p, "~", "~0")
		b.WriteString(strings.ReplaceAll(p, "/", "~1"))
	}
	return b.String()
}

// patch applies one JSON Patch operation.
func patch(v *hujson.Value, op string, path []string, value []byte) error {
	var b bytes.Buffer
	b.WriteString(`[{"op":`)
	b.WriteString(strconv.Quote(op))
	b.WriteString(`,"path":`)
	ptr, _ := json.Marshal(pointer(path))
	b.Write(ptr)
	if value != nil {
		b.WriteString(`,"value":`)
		b.Write(value)
	}
	b.WriteString(`}]`)
	return v.Patch(b.Bytes())
}

// setValue sets the member at path (every element but the last names an
// object) to value, creating the missing objects along the way. value is
// re-indented to sit at its place in src.
func setValue(root *hujson.Value, src []byte, path []string, value json.RawMessage) error {
	// Find the deepest existing object on the way.
	depth := 0
	parent := root
	for depth < len(path)-1 {
		next := parent.Find(pointer(path[depth : depth+1]))
		if next == nil {
			break
		}
		if _, ok := next.Value.(*hujson.Object); !ok {
			return &wrongKindError{path: path[:depth+1], want: "an object"}
		}
		parent = next
		depth++
	}
	obj := parent.Value.(*hujson.Object)
	unit := indentUnit(root, src)
	memberIndent := membersIndent(parent, src, unit)

	if depth == len(path)-1 {
		if existing := parent.Find(pointer(path[depth:])); existing != nil {
			// Replace in place: the entry keeps its position and the
			// comments around it.
			return patch(root, "replace", path, indentJSON(value, memberIndent, unit))
		}
	}

	// Add path[depth] to parent, nesting the rest of the path inside it.
	nested := []byte(value)
	for i := len(path) - 1; i > depth; i-- {
		key, _ := json.Marshal(path[i])
		nested = append(append(append([]byte("{"), key...), ':'), append(nested, '}')...)
	}
	hadTrailingComma := len(obj.Members) > 0 && obj.Members[len(obj.Members)-1].Value.AfterExtra != nil
	// A comment on the last member's line is that member's. The patch
	// keeps a // one there but leaves a /* */ one before the closing
	// brace, after the new member: take it out, to put it back below.
	var sameLine []byte
	if i := bytes.IndexByte(obj.AfterExtra, '\n'); len(obj.Members) > 0 && i >= 0 && hasComment(obj.AfterExtra[:i]) {
		sameLine = append([]byte(nil), obj.AfterExtra[:i]...)
		obj.AfterExtra = append(hujson.Extra(nil), obj.AfterExtra[i:]...)
	}
	if err := patch(root, "add", path[:depth+1], indentJSON(nested, memberIndent, unit)); err != nil {
		return err
	}
	// The patch appends the member with no layout; give it the layout of
	// its siblings and put the closing brace on its own line.
	obj = parent.Value.(*hujson.Object)
	m := &obj.Members[len(obj.Members)-1]
	before := bytes.TrimRight(append(sameLine, m.Name.BeforeExtra...), " \t")
	if !bytes.HasSuffix(before, []byte("\n")) {
		before = append(before, '\n')
	}
	m.Name.BeforeExtra = append(before, memberIndent...)
	m.Value.BeforeExtra = hujson.Extra(" ")
	if hadTrailingComma {
		m.Value.AfterExtra = hujson.Extra{}
	}
	closing := bytes.TrimRight(obj.AfterExtra, " \t")
	if !bytes.HasSuffix(closing, []byte("\n")) {
		closing = append(closing, '\n')
	}
	obj.AfterExtra = append(closing, lineIndent(src, parent.StartOffset)...)
	return nil
}

// removeMember removes the member or element at path, keeping the
// container's trailing-comma style.
func removeMember(root *hujson.Value, path []string) error {
	parent := root.Find(pointer(path[:len(path)-1]))
	hadTrailingComma := false
	if parent != nil {
		switch c := parent.Value.(type) {
		case *hujson.Object:
			hadTrailingComma = len(c.Members) > 0 && c.Members[len(c.Members)-1].Value.AfterExtra != nil
		case *hujson.Array:
			hadTrailingComma = len(c.Elements) > 0 && c.Elements[len(c.Elements)-1].AfterExtra != nil
		}
	}
	// A one-line array loses its first element: the new first one takes
	// the removed one's place right after the bracket.
	var firstBefore hujson.Extra
	restoreFirst := false
	if arr, ok := parent.Value.(*hujson.Array); ok && path[len(path)-1] == "0" && len(arr.Elements) > 1 {
		firstBefore = append(hujson.Extra(nil), arr.Elements[0].BeforeExtra...)
		next := arr.Elements[1].BeforeExtra
		restoreFirst = bytes.TrimSpace(next) == nil && bytes.IndexByte(next, '\n') < 0
	}
	// Removing the last member can hand the closing bracket the removed
	// member's indentation; keep the bracket's own.
	closeIndent, wasLast := closingIndent(parent), isLastMember(parent, path[len(path)-1])
	// Comments are told apart by line, which the patch does for // ones
	// only: one on the line the removed member follows (after the
	// previous member's comma, or the opening bracket) is not the removed
	// member's, and is kept; one on the removed member's own line is its,
	// and goes with it.
	idx := memberIndex(parent, path[len(path)-1])
	prevLine := cutSameLine(beforeExtraAt(parent, idx))
	cutSameLine(beforeExtraAt(parent, idx+1))
	if err := patch(root, "remove", path, nil); err != nil {
		return err
	}
	if e := beforeExtraAt(parent, idx); e != nil && prevLine != nil {
		*e = append(prevLine, *e...)
	}
	if wasLast && closeIndent != nil {
		setClosingIndent(parent, closeIndent)
	}
	if restoreFirst {
		parent.Value.(*hujson.Array).Elements[0].BeforeExtra = firstBefore
	}
	if hadTrailingComma {
		switch c := parent.Value.(type) {
		case *hujson.Object:
			if n := len(c.Members); n > 0 && c.Members[n-1].Value.AfterExtra == nil {
				c.Members[n-1].Value.AfterExtra = hujson.Extra{}
			}
		case *hujson.Array:
			if n := len(c.Elements); n > 0 && c.Elements[n-1].AfterExtra == nil {
				c.Elements[n-1].AfterExtra = hujson.Extra{}
			}
		}
	}
	return nil
}

// cutSameLine takes out of e, and returns, the comments at its start
// that sit on the line before it (those before its first newline); nil
// when there are none.
func cutSameLine(e *hujson.Extra) []byte {
	if e == nil {
		return nil
	}
	i := bytes.IndexByte(*e, '\n')
	if i < 0 || !hasComment((*e)[:i]) {
		return nil
	}
	head := append([]byte(nil), (*e)[:i]...)
	*e = append(hujson.Extra(nil), (*e)[i:]...)
	return head
}

// memberIndex returns the index of the member or element key of v, -1
// if there is none.
func memberIndex(v *hujson.Value, key string) int {
	if v == nil {
		return -1
	}
	switch c := v.Value.(type) {
	case *hujson.Object:
		return slices.IndexFunc(c.Members, func(m hujson.ObjectMember) bool { return memberName(&m) == key })
	case *hujson.Array:
		if i, err := strconv.Atoi(key); err == nil && i >= 0 && i < len(c.Elements) {
			return i
		}
	}
	return -1
}

// beforeExtraAt returns the blanks and comments before member or element
// i of v, those before its closing bracket for i one past the last; nil
// for an index out of range.
func beforeExtraAt(v *hujson.Value, i int) *hujson.Extra {
	if v == nil || i < 0 {
		return nil
	}
	switch c := v.Value.(type) {
	case *hujson.Object:
		switch {
		case i < len(c.Members):
			return &c.Members[i].Name.BeforeExtra
		case i == len(c.Members):
			return &c.AfterExtra
		}
	case *hujson.Array:
		switch {
		case i < len(c.Elements):
			return &c.Elements[i].BeforeExtra
		case i == len(c.Elements):
			return &c.AfterExtra
		}
	}
	return nil
}

// afterExtra returns the whitespace and comments before the closing
// bracket of an object or array value.
func afterExtra(v *hujson.Value) *hujson.Extra {
	switch c := v.Value.(type) {
	case *hujson.Object:
		return &c.AfterExtra
	case *hujson.Array:
		return &c.AfterExtra
	}
	return nil
}

// closingIndent returns the blanks before the closing bracket of v when
// the bracket starts its own line, else nil.
func closingIndent(v *hujson.Value) []byte {
	if v == nil {
		return nil
	}
	e := afterExtra(v)
	if e == nil {
		return nil
	}
	i := bytes.LastIndexByte(*e, '\n')
	if i < 0 || len(bytes.Trim((*e)[i+1:], " \t")) > 0 {
		return nil
	}
	return append([]byte{}, (*e)[i+1:]...)
}

// setClosingIndent makes the closing bracket of v sit on its own line
// with the given blanks in front.
func setClosingIndent(v *hujson.Value, indent []byte) {
	e := afterExtra(v)
	if e == nil {
		return
	}
	i := bytes.LastIndexByte(*e, '\n')
	if i < 0 || len(bytes.Trim((*e)[i+1:], " \t")) > 0 {
		return
	}
	*e = append((*e)[:i+1:i+1], indent...)
}

// isLastMember reports whether key names the last member or element of v.
func isLastMember(v *hujson.Value, key string) bool {
	if v == nil {
		return false
	}
	switch c := v.Value.(type) {
	case *hujson.Object:
		n := len(c.Members)
		return n > 0 && c.Members[n-1].Name.Value.(hujson.Literal).String() == key
	case *hujson.Array:
		return key == strconv.Itoa(len(c.Elements)-1)
	}
	return false
}

// arrayAt returns the array at path.
func arrayAt(root *hujson.Value, path []string) (*hujson.Array, bool) {
	v := root.Find(pointer(path))
	if v == nil {
		return nil, false
	}
	arr, ok := v.Value.(*hujson.Array)
	return arr, ok
}

// appendElement appends the string s to the array at path, laid out like
// the elements before it.
func appendElement(root *hujson.Value, src []byte, path []string, s string) error {
	arr, _ := arrayAt(root, path)
	// Lay the new element out like the last one: on its own line with the
	// same indentation, or after a space on a one-line array.
	var sep []byte
	if n := len(arr.Elements); n > 0 {
		sep = []byte(" ")
		prev := arr.Elements[n-1].BeforeExtra
		if i := bytes.LastIndexByte(prev, '\n'); i >= 0 {
			sep = append([]byte(nil), prev[i:]...)
		}
	}
	hadTrailingComma := len(arr.Elements) > 0 && arr.Elements[len(arr.Elements)-1].AfterExtra != nil
	lit, _ := json.Marshal(s)
	if err := patch(root, "add", append(append([]string(nil), path...), "-"), lit); err != nil {
		return err
	}
	arr, _ = arrayAt(root, path)
	e := &arr.Elements[len(arr.Elements)-1]
	// The patch may have moved the previous element's trailing comment in
	// front of the new one; keep it, then lay out.
	before := bytes.TrimRight(e.BeforeExtra, " \t\n")
	if len(before) > 0 && bytes.IndexByte(sep, '\n') < 0 {
		sep = append([]byte("\n"), sep...)
	}
	e.BeforeExtra = append(before, sep...)
	if hadTrailingComma {
		e.AfterExtra = hujson.Extra{}
	}
	return nil
}

// addString appends the string s to the array at path, creating the array
// and the objects on its way; errNoChange when it is there already.
func addString(v *hujson.Value, src []byte, path []string, s string) error {
	if arr, ok := arrayAt(v, path); ok {
		for _, e := range arr.Elements {
			if lit, ok := e.Value.(hujson.Literal); ok && lit.Kind() == '"' && lit.String() == s {
				return errNoChange
			}
		}
		return appendElement(v, src, path, s)
	}
	if f := v.Find(pointer(path)); f != nil {
		return &wrongKindError{path: path, want: "an array"}
	}
	one, _ := json.Marshal([]string{s})
	return setValue(v, src, path, one)
}

// dropString removes every element equal to the string s from the array at
// path (last first, so that the indexes stay valid) and returns how many.
// A missing array holds none; a value that is not an array is an error.
func dropString(v *hujson.Value, path []string, s string) (int, error) {
	arr, ok := arrayAt(v, path)
	if !ok {
		if f := v.Find(pointer(path)); f != nil {
			return 0, &wrongKindError{path: path, want: "an array"}
		}
		return 0, nil
	}
	n := 0
	for i := len(arr.Elements) - 1; i >= 0; i-- {
		lit, ok := arr.Elements[i].Value.(hujson.Literal)
		if !ok || lit.Kind() != '"' || lit.String() != s {
			continue
		}
		if err := removeMember(v, append(append([]string(nil), path...), strconv.Itoa(i))); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// pruneEmptied removes the array or object at path when an edit emptied
// it, then each object above it that this leaves empty (a local entry,
// "projects"), as [RemovePermissionRule] does: undoing an edit gives the
// file back as it was. A container or member that a comment goes with
// stays.
func pruneEmptied(root *hujson.Value, path []string) error {
	for len(path) > 0 {
		parent := root.Find(pointer(path[:len(path)-1]))
		if parent == nil {
			return nil
		}
		obj, ok := parent.Value.(*hujson.Object)
		if !ok {
			return nil
		}
		i := slices.IndexFunc(obj.Members, func(m hujson.ObjectMember) bool { return memberName(&m) == path[len(path)-1] })
		if i < 0 {
			return nil
		}
		m := &obj.Members[i]
		switch c := m.Value.Value.(type) {
		case *hujson.Array:
			if len(c.Elements) > 0 {
				return nil
			}
		case *hujson.Object:
			if len(c.Members) > 0 {
				return nil
			}
		default:
			return nil
		}
		// The comments of the member: above it, inside it, and after it
		// on its line (the next member's, or the closing bracket's).
		after := obj.AfterExtra
		if i+1 < len(obj.Members) {
			after = obj.Members[i+1].Name.BeforeExtra
		}
		if j := bytes.IndexByte(after, '\n'); j >= 0 {
			after = after[:j]
		}
		if hasComment(m.Name.BeforeExtra) || hasComment(*afterExtra(&m.Value)) || hasComment(after) {
			return nil
		}
		if err := removeMember(root, path); err != nil {
			return err
		}
		path = path[:len(path)-1]
	}
	return nil
}

// hasComment reports whether the blanks between tokens e hold a comment.
func hasComment(e hujson.Extra) bool {
	return bytes.Contains(e, []byte("//")) || bytes.Contains(e, []byte("/*"))
}

// lineIndent returns the blanks that start the line holding offset.
func lineIndent(src []byte, offset int) []byte {
	if offset > len(src) {
		offset = len(src)
	}
	start := bytes.LastIndexByte(src[:offset], '\n') + 1
	end := start
	for end < len(src) && (src[end] == ' ' || src[end] == '\t') {
		end++
	}
	return append([]byte(nil), src[start:end]...)
}

// membersIndent is the indentation for a member of the object v: that of
// its first member when that one starts a line, else one unit deeper than
// the line holding the opening brace.
func membersIndent(v *hujson.Value, src []byte, unit string) string {
	obj := v.Value.(*hujson.Object)
	if len(obj.Members) > 0 && bytes.IndexByte(obj.Members[0].Name.BeforeExtra, '\n') >= 0 {
		return string(lineIndent(src, obj.Members[0].Name.StartOffset))
	}
	return string(lineIndent(src, v.StartOffset)) + unit
}

// indentUnit guesses the file's indentation step from the first member of
// the top-level object; two spaces if it cannot tell.
func indentUnit(root *hujson.Value, src []byte) string {
	obj, ok := root.Value.(*hujson.Object)
	if ok && len(obj.Members) > 0 && bytes.IndexByte(obj.Members[0].Name.BeforeExtra, '\n') >= 0 {
		if in := lineIndent(src, obj.Members[0].Name.StartOffset); len(in) > 0 {
			return string(in)
		}
	}
	return "  "
}

// indentJSON lays out a JSON value for a place whose line starts with
// prefix, one unit per level. Arrays of scalars stay on one line, as people
// write args lists. Key order and number spellings are kept.
func indentJSON(value []byte, prefix, unit string) []byte {
	dec := json.NewDecoder(bytes.NewReader(value))
	dec.UseNumber()
	var b bytes.Buffer
	if err := writeIndented(&b, dec, prefix, unit); err != nil {
		return value
	}
	return b.Bytes()
}

func writeIndented(b *bytes.Buffer, dec *json.Decoder, prefix, unit string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		if !dec.More() {
			b.WriteString("{}")
			_, err := dec.Token()
			return err
		}
		b.WriteString("{")
		for first := true; dec.More(); first = false {
			if !first {
				b.WriteString(",")
			}
			key, err := dec.Token()
			if err != nil {
				return err
			}
			b.WriteString("\n" + prefix + unit)
			writeScalar(b, key)
			b.WriteString(": ")
			if err := writeIndented(b, dec, prefix+unit, unit); err != nil {
				return err
			}
		}
		b.WriteString("\n" + prefix + "}")
		_, err := dec.Token()
		return err
	case json.Delim('['):
		var elems []json.RawMessage
		for dec.More() {
			var e json.RawMessage
			if err := dec.Decode(&e); err != nil {
				return err
			}
			elems = append(elems, e)
		}
		if _, err := dec.Token(); err != nil {
			return err
		}
		scalars := true
		for _, e := range elems {
			if c := bytes.TrimSpace(e); len(c) > 0 && (c[0] == '{' || c[0] == '[') {
				scalars = false
			}
		}
		if scalars {
			b.WriteString("[")
			for i, e := range elems {
				if i > 0 {
					b.WriteString(", ")
				}
				var buf bytes.Buffer
				if err := json.Compact(&buf, e); err != nil {
					return err
				}
				b.Write(buf.Bytes())
			}
			b.WriteString("]")
			return nil
		}
		b.WriteString("[")
		for i, e := range elems {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("\n" + prefix + unit)
			sub := json.NewDecoder(bytes.NewReader(e))
			sub.UseNumber()
			if err := writeIndented(b, sub, prefix+unit, unit); err != nil {
				return err
			}
		}
		b.WriteString("\n" + prefix + "]")
		return nil
	}
	writeScalar(b, tok)
	return nil
}

// writeScalar writes a string, number, bool or null token as JSON, without
// escaping <, > and & (they are legal and people read these files).
func writeScalar(b *bytes.Buffer, tok json.Token) {
	if n, ok := tok.(json.Number); ok {
		b.WriteString(n.String())
		return
	}
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	enc.Encode(tok)
	b.Truncate(b.Len() - 1) // Encode's newline
}

// parseExisting reads and parses the JSONC file at path for a lookup: nil
// (and no error) when it does not exist or holds only white space and
// comments; a
// [Diagnostic] with file:line:col when it does not parse.
func parseExisting(path string) (*hujson.Value, error) {
	src, err := readConfigFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	src, _ = StripBOM(src)
	if len(bytes.TrimSpace(src)) == 0 || onlyComments(src) {
		return nil, nil
	}
	v, err := parseJSONCFile(path, src)
	if err != nil {
		return nil, err
	}
	return &v, nil
}

// parseJSONCFile parses the text of the file at path for an edit or a
// lookup; the error is a [Diagnostic] with file:line:col. A document
// in UTF-16, or nested too deep for the parser's stack, is refused first.
func parseJSONCFile(path string, text []byte) (hujson.Value, error) {
	if d, ok := utf16Diagnostic(path, text); ok {
		return hujson.Value{}, d
	}
	if err := CheckNesting(path, text); err != nil {
		return hujson.Value{}, err
	}
	v, err := hujson.Parse(text)
	if err != nil {
		return hujson.Value{}, ParseDiagnostic(path, err)
	}
	return v, nil
}
