package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportURLCredentials: a url that carries several credentials in its
// query is imported into the shared .mcp.json with none of them: each
// becomes its own ${VAR}, and the report names every one.
func TestImportURLCredentials(t *testing.T) {
	c := newImportAttack(t)
	c.writeJSON(filepath.Join(c.home, ".cursor", "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"hosted": map[string]any{"url": "https://x.example/mcp?api_key=AAAA1111aaaa&profile=p&token=BBBB2222bbbb"},
	}})
	rep := c.importJSON(c.proj, "--from", "cursor", "--scope", "project")
	if len(rep.Imported) != 1 {
		t.Fatalf("imported %+v, skipped %+v", rep.Imported, rep.Skipped)
	}
	b, _ := os.ReadFile(filepath.Join(c.proj, ".mcp.json"))
	want := `"url": "https://x.example/mcp?api_key=${HOSTED_API_KEY}&profile=p&token=${HOSTED_TOKEN}"`
	if !strings.Contains(string(b), want) || strings.Contains(string(b), "AAAA1111aaaa") || strings.Contains(string(b), "BBBB2222bbbb") {
		t.Errorf(".mcp.json does not hold %s, or holds a credential:\n%s", want, b)
	}
	notes := strings.Join(rep.Imported[0].Notes, "\n")
	for _, v := range []string{"set HOSTED_API_KEY", "set HOSTED_TOKEN"} {
		if !strings.Contains(notes, v) {
			t.Errorf("the notes do not say %q:\n%s", v, notes)
		}
	}
	if strings.Contains(notes, "AAAA1111aaaa") || strings.Contains(notes, "BBBB2222bbbb") {
		t.Errorf("the notes show a credential:\n%s", notes)
	}
}
