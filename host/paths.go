package host

import (
	"net/url"
	"path/filepath"
	"strings"
)

// fileURI turns an absolute path into a file:// URI (Windows drive paths
// get the leading slash URIs need).
func fileURI(path string) string {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

func baseName(path string) string { return filepath.Base(path) }
