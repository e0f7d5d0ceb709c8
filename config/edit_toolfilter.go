package config

import (
	"encoding/json"

	"github.com/tailscale/hujson"
)

// SetToolsHidden hides (hide true) or shows again the tools named tools of
// server in the tool-filter layer at objPath of the user file at path:
// objPath is nil for the layer of every workspace, or ["projects", key]
// for one workspace's local layer. The filter is written under
// "toolFilters" → server. Hiding adds each name to "disabledTools";
// showing removes it from there and, where the layer has an
// "enabledTools" list, adds it to that list. Other layers are not changed:
// [ToolFilter.Hidden] says whether another one still hides a tool. A
// "disabledTools" list emptied goes, and so do the server's entry,
// "toolFilters" and a local entry when that leaves them empty. Like
// every edit it keeps comments and holds the file's lock; a new file is
// private (0600).
func SetToolsHidden(path string, objPath []string, server string, tools []string, hide bool) error {
	base := append(append([]string(nil), objPath...), "toolFilters", server)
	at := func(key string) []string { return append(append([]string(nil), base...), key) }
	return editFile(path, privateFileMode, privateDirMode, func(v *hujson.Value, src []byte) error {
		if err := uniquePaths(v, at("disabledTools"), at("enabledTools")); err != nil {
			return err
		}
		changed := false
		add := func(key, name string) error {
			if f := v.Find(pointer(at(key))); f != nil {
				if _, ok := f.Value.(*hujson.Array); !ok {
					// A value that is not an array is replaced by the list.
					changed = true
					list, _ := json.Marshal([]string{name})
					return setValue(v, src, at(key), list)
				}
			}
			err := addString(v, src, at(key), name)
			if err == errNoChange {
				return nil
			}
			changed = true
			return err
		}
		for _, t := range tools {
			if hide {
				if err := add("disabledTools", t); err != nil {
					return err
				}
				continue
			}
			// A "disabledTools" that is not an array hides nothing to drop.
			if _, ok := arrayAt(v, at("disabledTools")); ok {
				n, err := dropString(v, at("disabledTools"), t)
				if err != nil {
					return err
				}
				changed = changed || n > 0
				if n > 0 {
					if err := pruneEmptied(v, at("disabledTools")); err != nil {
						return err
					}
				}
			}
			if _, ok := arrayAt(v, at("enabledTools")); ok {
				if err := add("enabledTools", t); err != nil {
					return err
				}
			}
		}
		if !changed {
			return errNoChange
		}
		return nil
	})
}
