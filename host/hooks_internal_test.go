package host

import (
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
)

// readableHooks takes out only the hooks whose "tools" cannot match a
// call, keeps the others in order, and writes neither slice it is given.
func TestReadableHooks(t *testing.T) {
	hooks := []config.CallHook{
		{Name: "a", Tools: []string{"mcp__gh"}},
		{Name: "bad", Tools: []string{"mcp__gh", "mcp__g*"}},
		{Name: "b"},
		{Name: "c", Tools: []string{"mcp__*", "mcp__fs__write_file(path:\"/etc/*\")"}},
	}
	given := slices.Clone(hooks)
	problems := []string{"earlier"}
	ok, got := readableHooks(hooks, problems)
	var names []string
	for _, h := range ok {
		names = append(names, h.Name)
	}
	if strings.Join(names, " ") != "a b c" {
		t.Errorf("kept %v, want a b c", names)
	}
	if len(got) != 2 || got[0] != "earlier" || !strings.Contains(got[1], `call hook "bad": "tools" entry "mcp__g*" is not a tool pattern`) {
		t.Errorf("problems %q", got)
	}
	if len(problems) != 1 || len(hooks) != len(given) || hooks[1].Name != "bad" {
		t.Error("readableHooks wrote a slice it was given")
	}
	// Nothing to take out: the same hooks.
	if ok, got := readableHooks(given[:1], nil); len(ok) != 1 || &ok[0] != &given[0] || got != nil {
		t.Errorf("all readable: %v %q", ok, got)
	}
}
