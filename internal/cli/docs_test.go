package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestDocsNameEveryCommandAndFlag: every command and every flag that
// --help shows is named somewhere in the README or docs/ (the README's
// command table, or the page about it), so that a reader of the docs meets
// what the binary has. A command may be named with its siblings
// ("permissions allow|ask|deny"); a flag by its long or its short form.
func TestDocsNameEveryCommandAndFlag(t *testing.T) {
	var all strings.Builder
	for _, p := range []string{"README.md", "docs/configuration.md", "docs/security.md", "docs/gateway.md", "docs/console.md", "docs/oauth.md"} {
		b, err := os.ReadFile(filepath.Join("..", "..", p))
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	docs := all.String()
	root := NewRootCmd(NewFactory())
	root.InitDefaultHelpFlag()
	root.InitDefaultVersionFlag()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c.Hidden || c.Name() == "help" {
			return
		}
		path := strings.TrimPrefix(c.CommandPath(), "switchboard ")
		if c.HasParent() && c.Runnable() {
			parent, last, _ := cutLast(path)
			named := regexp.MustCompile(`(^|[^\w-])` + regexp.QuoteMeta(parent) + ` ([\w-]+\|)*` + regexp.QuoteMeta(last) + `([^\w-]|$)`)
			if !strings.Contains(docs, path) && !named.MatchString(docs) {
				t.Errorf("command %q is in --help but named nowhere in README.md or docs/", path)
			}
		}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden || f.Name == "help" {
				return
			}
			if strings.Contains(docs, "--"+f.Name) || f.Shorthand != "" && strings.Contains(docs, "`-"+f.Shorthand) {
				return
			}
			t.Errorf("flag --%s of %q is in --help but named nowhere in README.md or docs/", f.Name, c.CommandPath())
		})
	}
	walk(root)
}

// cutLast splits "a b c" into "a b" and "c" ("" and "a" for "a").
func cutLast(path string) (parent, last string, ok bool) {
	i := strings.LastIndexByte(path, ' ')
	if i < 0 {
		return "", path, false
	}
	return path[:i], path[i+1:], true
}
