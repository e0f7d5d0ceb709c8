// Package samepath answers whether a path lies inside a folder, comparing
// folders by identity (os.SameFile) rather than by spelling, so that a
// symlink, a bind mount or a case-insensitive file system does not hide
// that a file is inside a repository.
package samepath

import (
	"os"
	"path/filepath"
)

// Within reports whether dir is p or one of p's ancestors as p is written,
// comparing each by identity, so that another spelling of dir (a link to
// it) counts. Links in p itself are not followed: see FileWithin.
func Within(p, dir string) bool {
	di, err := os.Stat(dir)
	if err != nil {
		return false
	}
	for d := filepath.Clean(p); ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && os.SameFile(fi, di) {
			return true
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}

// FileWithin reports whether file is in dir or below it, after following
// the links in file's path.
func FileWithin(file, dir string) bool {
	if r, err := filepath.EvalSymlinks(file); err == nil {
		file = r
	}
	return Within(filepath.Dir(file), dir)
}
