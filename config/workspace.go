package config

// This file decides which "projects" entry of a user file belongs to a
// workspace. Entries are keyed by a directory's path, and one directory
// has many paths: a symlinked checkout (~/proj → /data/proj), macOS's
// /tmp and /private/tmp, a trailing slash. Reading matches them all;
// writing edits the entry that is already there, else files a new one
// under the resolved path, as trust.WorkspaceKey files approvals.

import (
	"path/filepath"
	"sort"

	"github.com/tailscale/hujson"
)

// ProjectKey is the key a new "projects" entry for workspace is written
// under: the cleaned absolute path with every symbolic link resolved
// ([filepath.EvalSymlinks]), the key trust.WorkspaceKey files launch
// approvals under. It is also what a process started in the directory
// reads as its working directory (getcwd reports the physical path),
// which is how clients that key "projects" by their working directory
// spell it. When resolution fails (the directory does not exist, or a
// component of the path cannot be read) the key is the cleaned path: such
// a path names no other existing directory's resolved path, so two
// directories never share a key. A path that is not absolute has no key
// ("").
//
// It reads the file system on every call, so a repointed link is seen at
// once.
func ProjectKey(workspace string) string {
	if workspace == "" || !filepath.IsAbs(workspace) {
		return ""
	}
	clean := filepath.Clean(workspace)
	if real, err := filepath.EvalSymlinks(clean); err == nil && filepath.IsAbs(real) {
		return filepath.Clean(real)
	}
	return clean
}

// MatchProjectKeys returns which of keys (the keys of a "projects"
// object, in file order) name the entry of workspace, best first:
//
//  1. the key spelled exactly as workspace;
//  2. a key equal to it once cleaned ("/a/b/" for "/a/b");
//  3. the workspace's [ProjectKey] (its resolved path), where new
//     entries are written;
//  4. any other absolute key whose [ProjectKey] is the workspace's: a
//     path to the same directory through a symbolic link.
//
// Within a rank the later key in the file comes first, as the later of a
// name written twice wins. A key repeated in keys is returned once.
//
// Resolution happens now, on both sides: a link repointed at another
// directory takes no entry along, since the key written for the old
// target (its resolved path) no longer resolves to where the link
// points. A path that cannot be resolved is compared by its cleaned
// spelling only, and a key resolves to one directory at a time, so an
// entry never belongs to two different directories at once.
//
// More than one key means the user file holds the same directory twice;
// readers use the first and say so ([Load] reads the local servers of all
// of them, the first winning for a name both define).
func MatchProjectKeys(keys []string, workspace string) []string {
	if workspace == "" {
		return nil
	}
	clean := filepath.Clean(workspace)
	resolved := ProjectKey(workspace)
	type hit struct {
		key       string
		rank, pos int
	}
	var hits []hit
	seen := map[string]int{} // key → index in hits
	for pos, k := range keys {
		r := 0
		switch {
		case k == workspace:
			r = 1
		case filepath.Clean(k) == clean:
			r = 2
		case resolved == "" || !filepath.IsAbs(k):
			continue
		case k == resolved:
			r = 3
		case ProjectKey(k) == resolved:
			r = 4
		default:
			continue
		}
		if i, ok := seen[k]; ok {
			hits[i].pos = pos
			continue
		}
		seen[k] = len(hits)
		hits = append(hits, hit{k, r, pos})
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].rank != hits[j].rank {
			return hits[i].rank < hits[j].rank
		}
		return hits[i].pos > hits[j].pos
	})
	out := make([]string, 0, len(hits))
	for _, h := range hits {
		out = append(out, h.key)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// LocalKeys returns the keys of the "projects" entries of the JSONC file
// at path that belong to workspace, best first ([MatchProjectKeys]). The
// first is where the mcp commands edit the workspace's local scope; when
// there is none, a new entry goes under [ProjectKey](workspace). A missing
// file, or one without a "projects" object, has none; a file that does
// not parse is an error ([Diagnostic] with file:line:col).
func LocalKeys(path, workspace string) ([]string, error) {
	v, err := parseExisting(path)
	if v == nil || err != nil {
		return nil, err
	}
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil, nil
	}
	pm := lookupMember(obj, "projects")
	if pm == nil {
		return nil, nil
	}
	projects, ok := pm.Value.Value.(*hujson.Object)
	if !ok {
		return nil, nil
	}
	return MatchProjectKeys(memberNames(projects), workspace), nil
}

// LocalObjPath is the object of the user file that holds the local-scope
// servers filed under key: ["projects", key, "mcpServers"].
func LocalObjPath(key string) []string {
	return []string{"projects", key, "mcpServers"}
}

// memberNames returns the names of obj's members in file order.
func memberNames(obj *hujson.Object) []string {
	names := make([]string, 0, len(obj.Members))
	for i := range obj.Members {
		names = append(names, memberName(&obj.Members[i]))
	}
	return names
}
