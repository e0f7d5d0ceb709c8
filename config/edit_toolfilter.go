package config

import (
	"encoding/json"
	"strconv"

	"github.com/tailscale/hujson"
)

// SetToolsHidden hides (hide true) or shows again the tools named tools of
// server in the tool-filter layer at objPath of the user file at path:
// objPath is nil for the layer of every workspace, or ["projects", key]
// for one workspace's local layer. The filter is written under
// "toolFilters" → server. Hiding adds each name to "disabledTools";
// showing removes it from there and, where the layer has an
// "enabledTools" list, adds it to that list. Other layers are not changed:
// [ToolFilter.Hidden] says whether another one still hides a tool. Like
// every edit it keeps comments and holds the file's lock; a new file is
// private (0600).
func SetToolsHidden(path string, objPath []string, server string, tools []string, hide bool) error {
	base := append(append([]string(nil), objPath...), "toolFilters", server)
	at := func(key string) []string { return append(append([]string(nil), base...), key) }
	return editFile(path, privateFileMode, privateDirMode, func(v *hujson.Value, src []byte) error {
		changed := false
		has := func(key, name string) (int, bool) {
			arr, ok := arrayAt(v, at(key))
			if !ok {
				return -1, false
			}
			for i, e := range arr.Elements {
				if lit, ok := e.Value.(hujson.Literal); ok && lit.Kind() == '"' && lit.String() == name {
					return i, true
				}
			}
			return -1, false
		}
		add := func(key, name string) error {
			if _, ok := has(key, name); ok {
				return nil
			}
			changed = true
			if _, ok := arrayAt(v, at(key)); ok {
				return appendElement(v, src, at(key), name)
			}
			list, _ := json.Marshal([]string{name})
			return setValue(v, src, at(key), list)
		}
		drop := func(key, name string) error {
			for {
				i, ok := has(key, name)
				if !ok {
					return nil
				}
				changed = true
				if err := removeMember(v, append(at(key), strconv.Itoa(i))); err != nil {
					return err
				}
			}
		}
		for _, t := range tools {
			if hide {
				if err := add("disabledTools", t); err != nil {
					return err
				}
				continue
			}
			if err := drop("disabledTools", t); err != nil {
				return err
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
