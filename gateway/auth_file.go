package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tailscale/hujson"

	"github.com/switchboard-mcp/switchboard/internal/atomicfile"
	"github.com/switchboard-mcp/switchboard/internal/filelock"

	"github.com/switchboard-mcp/switchboard/internal/safefile"
)

// AddKey issues a new key for principal name in the auth file at path
// (creating the file, mode 0600, and the principal), adds groups to the
// principal's groups, and returns the key — the only time it is ever
// shown: the file keeps its SHA-256. A name [ReservedName] refuses gets
// no key. The edit keeps the file's comments
// and is serialized with other edits by a lock.
func AddKey(path, name string, groups []string, now time.Time) (key string, err error) {
	if err := ReservedName(name); err != nil {
		return "", err
	}
	if err := ValidName(name); err != nil {
		return "", err
	}
	for _, g := range groups {
		if err := ValidName(g); err != nil {
			return "", fmt.Errorf("group: %w", err)
		}
	}
	key, id, err := NewKey()
	if err != nil {
		return "", err
	}
	err = editAuthFile(path, func(f *AuthFile) ([]patchOp, error) {
		var ops []patchOp
		p := "/principals/" + pointerEscape(name)
		e := f.Principals[name]
		if e == nil {
			e = &AuthEntry{}
			ops = append(ops, patchOp{"add", p, map[string]any{}})
		}
		var add []string
		for _, g := range groups {
			if !slices.Contains(e.Groups, g) && !slices.Contains(add, g) {
				add = append(add, g)
			}
		}
		if len(add) > 0 {
			if e.Groups == nil {
				ops = append(ops, patchOp{"add", p + "/groups", add})
			} else {
				for _, g := range add {
					ops = append(ops, patchOp{"add", p + "/groups/-", g})
				}
			}
		}
		k := AuthKey{ID: id, SHA256: KeyHash(key), Created: now.UTC().Truncate(time.Second)}
		if e.Keys == nil {
			ops = append(ops, patchOp{"add", p + "/keys", []AuthKey{k}})
		} else {
			ops = append(ops, patchOp{"add", p + "/keys/-", k})
		}
		return ops, nil
	})
	if err != nil {
		return "", err
	}
	return key, nil
}

// RevokeKeys removes every key of principal name from the auth file (its
// groups, rules and limits stay) and returns how many there were. A
// running gateway refuses them from its next reload on (within about a
// second).
func RevokeKeys(path, name string) (int, error) {
	n := 0
	err := editAuthFile(path, func(f *AuthFile) ([]patchOp, error) {
		e := f.Principals[name]
		if e == nil || strings.HasPrefix(name, GroupPrefix) {
			return nil, fmt.Errorf("no principal %q in %s", name, path)
		}
		n = len(e.Keys)
		if n == 0 {
			return nil, nil
		}
		return []patchOp{{"replace", "/principals/" + pointerEscape(name) + "/keys", []AuthKey{}}}, nil
	})
	return n, err
}

type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

func pointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// editAuthFile applies the patch edit returns to the auth file under its
// lock, and writes the file again atomically with mode 0600.
func editAuthFile(path string, edit func(*AuthFile) ([]patchOp, error)) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
	}
	unlock, err := filelock.Lock(path, filelock.DefaultTimeout)
	if err != nil {
		return err
	}
	defer unlock()
	f, _, err := ReadAuthFile(path)
	if err != nil {
		return fmt.Errorf("%w (fix the file first; nothing was written)", err)
	}
	src, err := safefile.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || len(strings.TrimSpace(string(src))) == 0 {
		src = []byte("{}\n")
	} else if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	v, err := hujson.Parse(src)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var ops []patchOp
	if _, ok := findMember(v, "principals"); !ok {
		ops = append(ops, patchOp{"add", "/principals", map[string]any{}})
	}
	more, err := edit(f)
	if err != nil {
		return err
	}
	if len(more) == 0 {
		return nil
	}
	ops = append(ops, more...)
	patch, err := json.Marshal(ops)
	if err != nil {
		return err
	}
	if err := v.Patch(patch); err != nil {
		return fmt.Errorf("editing %s: %w", path, err)
	}
	v.Format()
	return atomicfile.WriteFile(path, v.Pack(), 0o600)
}

func findMember(v hujson.Value, name string) (*hujson.ObjectMember, bool) {
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil, false
	}
	for i := range obj.Members {
		if lit, ok := obj.Members[i].Name.Value.(hujson.Literal); ok && lit.String() == name {
			return &obj.Members[i], true
		}
	}
	return nil, false
}
