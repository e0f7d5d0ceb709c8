package config

// The settings edits of `switchboard permissions` and of an "always"
// answer: rules added to and removed from the "permissions" lists of the
// user settings file (~/.switchboard/settings.json) or of a workspace's
// local entry in it ("projects" → <workspace> → "permissions"). They go
// through editFile like every other edit: comment-preserving, atomic and
// holding the file's lock.

import (
	"bytes"
	"fmt"
	"os"

	"github.com/tailscale/hujson"
)

// permissionLists are the lists of a "permissions" object, strongest last.
var permissionLists = []string{"allow", "ask", "deny"}

// SettingsLocalPath is the object of the user settings file that holds the
// local settings of the workspace filed under key: ["projects", key] (key
// as [ProjectKey] or an existing entry [LocalKeys] found).
func SettingsLocalPath(key string) []string { return []string{"projects", key} }

// SetPermissionRule puts rule in the "permissions" list named list (allow,
// ask or deny) of the object at objPath of the settings file at path (nil:
// the top level, the user settings; [SettingsLocalPath]: a workspace's
// local settings), and takes it out of the other two lists of that object,
// so that the object says one thing about it. The rule is compared as
// written. moved are the lists it was taken out of; changed is false (and
// the file untouched) when it was already in list and nowhere else. A
// missing file is created private (0600), missing directories 0700.
//
// It never judges the rule: callers check it first (policy.CheckRule).
func SetPermissionRule(path string, objPath []string, list, rule string) (moved []string, changed bool, err error) {
	if !isPermissionList(list) {
		return nil, false, fmt.Errorf("there is no permissions list %q (allow, ask or deny)", list)
	}
	at := func(l string) []string { return append(append([]string(nil), objPath...), "permissions", l) }
	err = editFile(path, privateFileMode, privateDirMode, func(v *hujson.Value, src []byte) error {
		if err := uniquePaths(v, at("allow"), at("ask"), at("deny")); err != nil {
			return err
		}
		moved, changed = nil, false
		for _, other := range permissionLists {
			if other == list {
				continue
			}
			n, err := dropString(v, at(other), rule)
			if err != nil {
				return err
			}
			if n > 0 {
				moved, changed = append(moved, other), true
			}
		}
		perms := at(list)[:len(objPath)+1]
		if err := addString(v, src, at(list), rule); err == errNoChange {
			if !changed {
				return errNoChange
			}
		} else if err != nil {
			return err
		} else {
			changed = true
		}
		// Lists the rule left empty go, as RemovePermissionRule's do.
		return pruneEmpty(v, perms)
	})
	return moved, changed, err
}

// RemovePermissionRule takes rule (compared as written) out of the
// "permissions" list named list of the object at objPath of the settings
// file at path — out of all three lists when list is "". Lists, the
// "permissions" object and a local entry left empty (and without
// comments) go too, so that setting and then removing a rule gives back
// the file it started from. removed are the lists it was in; nil (and the
// file untouched) when it was in none, or the file does not exist.
func RemovePermissionRule(path string, objPath []string, list, rule string) (removed []string, err error) {
	if list != "" && !isPermissionList(list) {
		return nil, fmt.Errorf("there is no permissions list %q (allow, ask or deny)", list)
	}
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return nil, nil
	}
	at := func(l string) []string { return append(append([]string(nil), objPath...), "permissions", l) }
	err = editFile(path, privateFileMode, privateDirMode, func(v *hujson.Value, src []byte) error {
		if err := uniquePaths(v, at("allow"), at("ask"), at("deny")); err != nil {
			return err
		}
		removed = nil
		for _, l := range permissionLists {
			if list != "" && l != list {
				continue
			}
			n, err := dropString(v, at(l), rule)
			if err != nil {
				return err
			}
			if n > 0 {
				removed = append(removed, l)
			}
		}
		if removed == nil {
			return errNoChange
		}
		return pruneEmpty(v, at("")[:len(objPath)+1])
	})
	return removed, err
}

// pruneEmpty removes the permission lists of the "permissions" object at
// perms that are empty, then that object if it is empty, then its parents
// (a local entry and "projects") left empty — each only when it holds no
// comment, which is the user's and stays.
func pruneEmpty(v *hujson.Value, perms []string) error {
	empty := func(path []string) bool {
		f := v.Find(pointer(path))
		if f == nil {
			return false
		}
		switch c := f.Value.(type) {
		case *hujson.Array:
			return len(c.Elements) == 0 && len(bytes.TrimSpace(c.AfterExtra)) == 0
		case *hujson.Object:
			return len(c.Members) == 0 && len(bytes.TrimSpace(c.AfterExtra)) == 0
		}
		return false
	}
	for _, l := range permissionLists {
		p := append(append([]string(nil), perms...), l)
		if empty(p) {
			if err := removeMember(v, p); err != nil {
				return err
			}
		}
	}
	for k := len(perms); k >= 1; k-- {
		if !empty(perms[:k]) {
			break
		}
		if err := removeMember(v, perms[:k]); err != nil {
			return err
		}
	}
	return nil
}

func isPermissionList(l string) bool {
	for _, x := range permissionLists {
		if l == x {
			return true
		}
	}
	return false
}
