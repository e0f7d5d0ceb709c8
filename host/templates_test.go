package host_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

func templateRefs(ts []host.ResourceTemplate) []string {
	out := []string{}
	for _, t := range ts {
		out = append(out, t.Server+" "+t.Template.URITemplate)
	}
	return out
}

// ResourceTemplates lists every server's templates, sorted by server; a
// server without resources/templates/list has none and is no warning; a
// URI built from a template is read with ReadResource; and the cached list
// follows resources/list_changed.
func TestResourceTemplates(t *testing.T) {
	events := make(chan host.Event, 64)
	h := newHost(t, cfgOf(
		stdio("beta", "templates", "-tag", "beta"),
		stdio("alpha", "templates", "-tag", "alpha"),
		stdio("nolist", "templates", "-no-template-list"),
		stdio("echo", "echo"),
	), &host.Options{OnEvent: func(ev host.Event) {
		if ev.Kind == host.EventResourcesChanged {
			select {
			case events <- ev:
			default:
			}
		}
	}})
	ctx := ctxFor(t, 20*time.Second)
	h.WaitReady(ctx)
	got, warnings, err := h.ResourceTemplates(ctx)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("ResourceTemplates: %v, warnings %q", err, warnings)
	}
	want := []string{"alpha " + testserver.NotesTemplate, "beta " + testserver.NotesTemplate}
	if diff := cmp.Diff(want, templateRefs(got)); diff != "" {
		t.Fatalf("templates (-want +got):\n%s", diff)
	}
	if got[0].Template.Name != "note" || got[0].Template.MIMEType != "text/plain" {
		t.Errorf("template = %+v", got[0].Template)
	}
	rr, err := h.ReadResource(ctx, "beta", "test://notes/9")
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "note 9 from beta" {
		t.Fatalf("read test://notes/9 from beta: %v, %v", rr, err)
	}

	mustCall(t, h, "mcp__alpha__add_template", map[string]any{"name": "books"})
	waitTemplates(t, ctx, h, events, []string{"alpha test://books/{id}", "alpha " + testserver.NotesTemplate, "beta " + testserver.NotesTemplate})
	mustCall(t, h, "mcp__alpha__remove_template", map[string]any{"name": "books"})
	waitTemplates(t, ctx, h, events, want)
}

// waitTemplates waits for a resources_changed event after which the
// templates are want.
func waitTemplates(t *testing.T, ctx context.Context, h *host.Host, events chan host.Event, want []string) {
	t.Helper()
	var got []string
	for {
		select {
		case <-events:
			ts, _, err := h.ResourceTemplates(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got = templateRefs(ts); cmp.Equal(want, got) {
				return
			}
		case <-ctx.Done():
			t.Fatalf("templates did not follow resources/list_changed (-want +got):\n%s", cmp.Diff(want, got))
		}
	}
}
