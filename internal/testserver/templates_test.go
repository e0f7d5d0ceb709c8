package testserver_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

func templatesOf(t *testing.T, cs *mcp.ClientSession) ([]string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []string
	for rt, err := range cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			return nil, err
		}
		out = append(out, rt.URITemplate)
	}
	return out, nil
}

// The templates server behaves as its description says: it lists
// test://notes/{id}, reads a URI built from it with its -tag, completes
// {id}, adds and removes templates at runtime, and with -no-template-list
// answers resources/templates/list with method not found.
func TestTemplatesServer(t *testing.T) {
	changed := make(chan struct{}, 8)
	cs, _ := connectWith(t, connectOpts{client: &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed <- struct{}{} },
	}}, "templates", "-tag", "one")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	got, err := templatesOf(t, cs)
	if err != nil || !cmp.Equal([]string{testserver.NotesTemplate}, got) {
		t.Fatalf("templates = %v, %v", got, err)
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://notes/5"})
	if err != nil || rr.Contents[0].Text != "note 5 from one" {
		t.Fatalf("read = %v, %v", rr, err)
	}
	cr, err := cs.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: testserver.NotesTemplate},
		Argument: mcp.CompleteParamsArgument{Name: "id", Value: "1"},
	})
	if err != nil || !cmp.Equal([]string{"1", "10", "12"}, cr.Completion.Values) {
		t.Errorf("complete = %v, %v", cr, err)
	}

	if res := call(t, cs, "add_template", map[string]any{"name": "books"}); res.IsError {
		t.Fatalf("add_template: %s", textOf(res))
	}
	waitChanged(t, ctx, changed)
	if got, _ := templatesOf(t, cs); !cmp.Equal([]string{"test://books/{id}", testserver.NotesTemplate}, got) {
		t.Errorf("after add_template: %v", got)
	}
	rr, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://books/2"})
	if err != nil || rr.Contents[0].Text != "books 2 from one" {
		t.Errorf("read books = %v, %v", rr, err)
	}
	if res := call(t, cs, "add_template", map[string]any{"name": "Bad Name"}); !res.IsError {
		t.Errorf("add_template with a bad name: %s", textOf(res))
	}
	call(t, cs, "remove_template", map[string]any{"name": "books"})
	waitChanged(t, ctx, changed)
	if got, _ := templatesOf(t, cs); !cmp.Equal([]string{testserver.NotesTemplate}, got) {
		t.Errorf("after remove_template: %v", got)
	}

	nl, _ := connect(t, "templates", "-no-template-list")
	_, err = templatesOf(t, nl)
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("-no-template-list: error %v, want method not found", err)
	}
}

func waitChanged(t *testing.T, ctx context.Context, changed chan struct{}) {
	t.Helper()
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no resources/list_changed")
	}
}
