package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// templatesWorld has the demo server (one resource) and two servers
// offering the same resource template test://notes/{id}.
func templatesWorld(t *testing.T) *rtWorld {
	w := newRTWorld(t)
	w.userServers(map[string]any{
		"demo":  w.server("demo"),
		"notes": w.server("templates", "-tag", "notes"),
		"more":  w.server("templates", "-tag", "more"),
	})
	return w
}

// `resources` lists templates after the resources, marked as templates,
// with a stable --json shape; a URI built from a template is read with
// `read`.
func TestResourcesWithTemplates(t *testing.T) {
	w := templatesWorld(t)
	t.Run("json", func(t *testing.T) {
		out, stderr, code := w.run(false, "resources", "--json")
		if code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		golden(t, "resources_templates_json", out)
		var rows []map[string]any
		if err := json.Unmarshal([]byte(out), &rows); err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, r := range rows {
			for _, k := range []string{"kind", "ref", "server", "uri", "name", "description", "mimeType"} {
				if _, ok := r[k]; !ok {
					t.Errorf("row %v has no key %q", r["ref"], k)
				}
			}
			kinds = append(kinds, r["kind"].(string)+" "+r["ref"].(string))
		}
		want := []string{
			"resource @demo:demo://readme",
			"template @more:test://notes/{id}",
			"template @notes:test://notes/{id}",
		}
		if diff := cmp.Diff(want, kinds); diff != "" {
			t.Errorf("rows (-want +got):\n%s", diff)
		}
	})
	t.Run("piped table marks templates", func(t *testing.T) {
		out, stderr, code := w.run(false, "resources")
		if code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		want := "RESOURCE\tTYPE\tDESCRIPTION\n" +
			"@demo:demo://readme\ttext/markdown\tAbout the demo server\n" +
			"@more:test://notes/{id}\ttext/plain\t(template) A note by id\n" +
			"@notes:test://notes/{id}\ttext/plain\t(template) A note by id\n"
		if diff := cmp.Diff(want, out); diff != "" {
			t.Errorf("resources (-want +got):\n%s", diff)
		}
	})
	t.Run("--server", func(t *testing.T) {
		out, stderr, code := w.run(false, "resources", "--server", "notes")
		if code != 0 || out != "RESOURCE\tTYPE\tDESCRIPTION\n@notes:test://notes/{id}\ttext/plain\t(template) A note by id\n" {
			t.Errorf("exit %d, stdout %q, stderr %q", code, out, stderr)
		}
	})
	t.Run("read a URI built from a template", func(t *testing.T) {
		out, stderr, code := w.run(false, "read", "@more:test://notes/4")
		if code != 0 || out != "note 4 from more" {
			t.Errorf("exit %d, stdout %q, stderr %q", code, out, stderr)
		}
	})
	t.Run("a URI given without its server", func(t *testing.T) {
		out, stderr, code := w.run(false, "read", "test://notes/4")
		if code != 2 || out != "" || !strings.Contains(stderr, `test://notes/4 is a resource's URI, and there is no server named "test"`) ||
			!strings.Contains(stderr, "hint: switchboard read @SERVER:test://notes/4") {
			t.Errorf("exit %d, stdout %q, stderr %q; want 2 and a hint to name the server", code, out, stderr)
		}
	})
	t.Run("tty", func(t *testing.T) {
		out, stderr, code := w.run(true, "resources")
		if code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		if !strings.Contains(out, "@notes:test://notes/{id}") || !strings.Contains(out, "(template) A note by id") {
			t.Errorf("tty table lacks the template:\n%s", out)
		}
	})
}
