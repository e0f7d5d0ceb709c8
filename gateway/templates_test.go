package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// resourceFixture starts a gateway whose client reports every
// resources/list_changed on the returned channel.
func resourceFixture(t *testing.T, servers ...config.ResolvedServer) (*fixture, chan struct{}) {
	t.Helper()
	changed := make(chan struct{}, 64)
	f := startWith(t, fixtureOpts{client: &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	}}, nil, servers...)
	return f, changed
}

func templateURIs(t *testing.T, ctx context.Context, cs *mcp.ClientSession) []string {
	t.Helper()
	uris := []string{}
	for rt, err := range cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			t.Fatalf("listing resource templates: %v", err)
		}
		uris = append(uris, rt.URITemplate)
	}
	return uris
}

// readText reads uri through the gateway and returns its text, or the error.
func readText(ctx context.Context, cs *mcp.ClientSession, uri string) (string, error) {
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, c := range res.Contents {
		b.WriteString(c.Text)
	}
	return b.String(), nil
}

func isNotFound(err error) bool {
	var rpcErr *jsonrpc.Error
	return errors.As(err, &rpcErr) && rpcErr.Code == mcp.CodeResourceNotFound
}

// waitRead waits for a resources/list_changed after which reading uri
// gives want (or, with want "", a resource-not-found error).
func waitRead(t *testing.T, ctx context.Context, f *fixture, changed chan struct{}, uri, want string) {
	t.Helper()
	waitReadFunc(t, ctx, f, changed, uri, fmt.Sprintf("%q", want), func(got string, err error) bool {
		if want == "" {
			return isNotFound(err)
		}
		return err == nil && got == want
	})
}

// waitReadFunc waits for a resources/list_changed after which reading uri
// satisfies ok (described by desc for the failure message).
func waitReadFunc(t *testing.T, ctx context.Context, f *fixture, changed chan struct{}, uri, desc string, ok func(string, error) bool) {
	t.Helper()
	var got string
	var err error
	for {
		select {
		case <-changed:
			if got, err = readText(ctx, f.session, uri); ok(got, err) {
				return
			}
		case <-ctx.Done():
			t.Fatalf("no resources/list_changed after which %s reads %s; last read %q, %v", uri, desc, got, err)
		}
	}
}

// Templates of two servers are listed through the gateway, a URI built from
// one is read from the right server, and a URI nothing offers is refused as
// "resource not found".
func TestResourceTemplatesThroughGateway(t *testing.T) {
	f, _ := resourceFixture(t, stdio("alpha", "templates", "-tag", "alpha"), stdio("gamma", "echo"))
	ctx := ctxFor(t, 30*time.Second)
	if diff := cmp.Diff([]string{testserver.NotesTemplate}, templateURIs(t, ctx, f.session)); diff != "" {
		t.Errorf("templates (-want +got):\n%s", diff)
	}
	var got *mcp.ResourceTemplate
	for rt, err := range f.session.ResourceTemplates(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		got = rt
	}
	want := &mcp.ResourceTemplate{URITemplate: testserver.NotesTemplate, Name: "note", Title: "A note by id",
		Description: "The note with the given id; any id but an empty one exists.", MIMEType: "text/plain"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("template (-want +got):\n%s", diff)
	}

	text, err := readText(ctx, f.session, "test://notes/42")
	if err != nil || text != "note 42 from alpha" {
		t.Errorf("read test://notes/42 = %q, %v; want the note from alpha", text, err)
	}
	// Concrete resources still go to the server that lists them.
	if text, err := readText(ctx, f.session, "test://echo/readme"); err != nil || !strings.Contains(text, "echo test server") {
		t.Errorf("read test://echo/readme = %q, %v", text, err)
	}
	for _, uri := range []string{"test://nothing/1", "test://notes/a/b", "test://notes/"} {
		_, err := readText(ctx, f.session, uri)
		if !isNotFound(err) {
			t.Errorf("read %s: error %v, want resource not found", uri, err)
		}
	}

	// completion/complete for a template's variable reaches its server.
	res, err := f.session.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: testserver.NotesTemplate},
		Argument: mcp.CompleteParamsArgument{Name: "id", Value: "1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"1", "10", "12"}, res.Completion.Values); diff != "" {
		t.Errorf("completion of {id} (-want +got):\n%s", diff)
	}
}

// Two servers offering the same template: it is listed once and read from
// the first server by name; when that server goes away (paused, or removed
// by a reload) the other serves it, and when it comes back it serves again.
func TestIdenticalTemplatesAndServerDrop(t *testing.T) {
	alpha, beta := stdio("alpha", "templates", "-tag", "alpha"), stdio("beta", "templates", "-tag", "beta")
	f, changed := resourceFixture(t, alpha, beta)
	ctx := ctxFor(t, 60*time.Second)
	if diff := cmp.Diff([]string{testserver.NotesTemplate}, templateURIs(t, ctx, f.session)); diff != "" {
		t.Errorf("templates (-want +got):\n%s", diff)
	}
	if text, err := readText(ctx, f.session, "test://notes/7"); err != nil || text != "note 7 from alpha" {
		t.Fatalf("read = %q, %v; want the note from alpha", text, err)
	}

	drain(changed)
	if err := f.h.Pause("alpha"); err != nil {
		t.Fatal(err)
	}
	waitRead(t, ctx, f, changed, "test://notes/7", "note 7 from beta")
	if diff := cmp.Diff([]string{testserver.NotesTemplate}, templateURIs(t, ctx, f.session)); diff != "" {
		t.Errorf("templates with alpha paused (-want +got):\n%s", diff)
	}
	drain(changed)
	if err := f.h.Resume("alpha"); err != nil {
		t.Fatal(err)
	}
	waitRead(t, ctx, f, changed, "test://notes/7", "note 7 from alpha")

	// A reload that drops alpha hands the template to beta; one that drops
	// beta too leaves nothing to serve it.
	drain(changed)
	f.h.Apply(&config.Resolved{Servers: []config.ResolvedServer{beta}})
	waitRead(t, ctx, f, changed, "test://notes/7", "note 7 from beta")
	drain(changed)
	f.h.Apply(&config.Resolved{})
	waitRead(t, ctx, f, changed, "test://notes/7", "")
	if got := templateURIs(t, ctx, f.session); len(got) != 0 {
		t.Errorf("templates with no server = %v, want none", got)
	}
	drain(changed)
	f.h.Apply(&config.Resolved{Servers: []config.ResolvedServer{alpha}})
	waitRead(t, ctx, f, changed, "test://notes/7", "note 7 from alpha")
}

// A server adding and removing a template at runtime
// (resources/list_changed) changes what the gateway serves.
func TestTemplateListChangedFollowsUpstream(t *testing.T) {
	f, changed := resourceFixture(t, stdio("alpha", "templates", "-tag", "alpha"))
	ctx := ctxFor(t, 30*time.Second)
	if _, err := readText(ctx, f.session, "test://books/3"); !isNotFound(err) {
		t.Fatalf("read before add_template: %v, want resource not found", err)
	}
	drain(changed)
	res, err := f.session.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__add_template", Arguments: map[string]any{"name": "books"}})
	if err != nil || res.IsError {
		t.Fatalf("add_template: %v %v", err, res)
	}
	waitRead(t, ctx, f, changed, "test://books/3", "books 3 from alpha")
	if diff := cmp.Diff([]string{"test://books/{id}", testserver.NotesTemplate}, templateURIs(t, ctx, f.session)); diff != "" {
		t.Errorf("templates (-want +got):\n%s", diff)
	}
	drain(changed)
	res, err = f.session.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__remove_template", Arguments: map[string]any{"name": "books"}})
	if err != nil || res.IsError {
		t.Fatalf("remove_template: %v %v", err, res)
	}
	waitRead(t, ctx, f, changed, "test://books/3", "")
}

// Launch trust applies to templated reads as to every other use of a
// server: a repo-authored server held in needs-approval offers no
// templates, and a URI built from its template is not read.
func TestTemplatesOfAHeldServerAreNotServed(t *testing.T) {
	held := stdio("held", "templates", "-tag", "held")
	held.Scope, held.Trust = config.ScopeProject, config.TrustRepo
	f, _ := resourceFixture(t, held, stdio("gamma", "echo"))
	ctx := ctxFor(t, 30*time.Second)
	if got := templateURIs(t, ctx, f.session); len(got) != 0 {
		t.Errorf("templates = %v, want none from a server that needs approval", got)
	}
	if _, err := readText(ctx, f.session, "test://notes/1"); !isNotFound(err) {
		t.Errorf("read of a held server's templated URI: %v, want resource not found", err)
	}
}
