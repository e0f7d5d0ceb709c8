package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// DefaultHome returns the Switchboard directory: $SWITCHBOARD_HOME when set
// and not empty, else homeDir/.switchboard. lookupEnv nil means
// os.LookupEnv.
func DefaultHome(lookupEnv func(string) (string, bool), homeDir string) string {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	if h, ok := lookupEnv("SWITCHBOARD_HOME"); ok && h != "" {
		return h
	}
	return filepath.Join(homeDir, ".switchboard")
}

// FindRoot returns the project root for cwd: the nearest ancestor (cwd
// included) holding .mcp.json, a .switchboard directory or .git (a
// directory, or the file a worktree has), or "" if none does. The
// .switchboard directory that is the Switchboard home itself (see
// [DefaultHome], from the process environment) does not count, or every
// directory under $HOME would have $HOME as its project; nor is the home
// itself a project root, whatever it holds. A relative cwd is made
// absolute first.
func FindRoot(cwd string) string {
	homeDir, _ := os.UserHomeDir()
	home := ""
	if homeDir != "" {
		home = DefaultHome(nil, homeDir)
	}
	return findRoot(cwd, home)
}

func findRoot(cwd, home string) string {
	if cwd == "" {
		return ""
	}
	dir, err := filepath.Abs(cwd)
	if err != nil {
		return ""
	}
	if home != "" {
		if h, err := filepath.Abs(home); err == nil {
			home = h
		}
	}
	for {
		// The Switchboard home is no project, whatever it holds: a
		// .mcp.json there is a misplaced user file (see Load).
		if dir != home && (exists(filepath.Join(dir, ".mcp.json")) || exists(filepath.Join(dir, ".git"))) {
			return dir
		}
		if sb := filepath.Join(dir, ".switchboard"); sb != home && isDir(sb) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// UserFile returns the user-scope file: the first existing of
// <home>/mcp.json and the legacy <homeDir>/.switchboard.json, else
// <home>/mcp.json, where writes create it. An empty homeDir skips the
// legacy file. "Existing" means anything is there, even a directory or an
// unreadable file: loading then reports it rather than quietly reading the
// next one.
func UserFile(home string, homeDir string) string {
	return firstExisting(userFiles(home, homeDir))
}

// userFiles lists the user-scope files in the order UserFile tries them.
func userFiles(home, homeDir string) []string {
	files := []string{filepath.Join(home, "mcp.json")}
	if homeDir != "" {
		files = append(files, filepath.Join(homeDir, ".switchboard.json"))
	}
	return files
}

// projectFiles lists the project-scope files in the order ProjectFile
// tries them.
func projectFiles(root string) []string {
	return []string{filepath.Join(root, ".mcp.json"), filepath.Join(root, "mcp.json")}
}

// upToFirstExisting returns paths up to and including the first that
// exists, or all of them when none does: the files whose appearance or
// change decides what a scope reads.
func upToFirstExisting(paths []string) []string {
	for i, p := range paths {
		if exists(p) {
			return paths[:i+1]
		}
	}
	return paths
}

// ProjectFile returns the project-scope file of a root: the first existing
// of <root>/.mcp.json and <root>/mcp.json, else <root>/.mcp.json.
func ProjectFile(root string) string {
	return firstExisting(projectFiles(root))
}

// firstExisting returns the first of paths that exists, else the first.
func firstExisting(paths []string) string {
	for _, p := range paths {
		if exists(p) {
			return p
		}
	}
	return paths[0]
}

// WorkspaceFile returns the workspace enablement file of a root:
// <root>/.switchboard/workspace.json.
func WorkspaceFile(root string) string {
	return filepath.Join(root, ".switchboard", "workspace.json")
}

// ManagedFile returns the managed configuration file in dir:
// <dir>/managed-mcp.json.
func ManagedFile(dir string) string {
	return filepath.Join(dir, "managed-mcp.json")
}

// DefaultManagedDir is where managed-mcp.json lives when neither
// LoadOptions.ManagedDir nor $SWITCHBOARD_MANAGED_DIR says otherwise.
const DefaultManagedDir = "/etc/switchboard"

// exists reports whether anything is at p. An error other than "does not
// exist" (permission denied on a parent) counts as existing, so that the
// caller reads it and reports the error.
func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil || !errors.Is(err, fs.ErrNotExist)
}

// gone reports whether no file is at p to read any more: nothing there, a
// symbolic link to nothing, a path through a non-directory, a directory.
// A file there that may not be read is not gone.
func gone(p string) bool {
	fi, err := os.Stat(p)
	if err != nil {
		return !errors.Is(err, fs.ErrPermission)
	}
	return fi.IsDir()
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
