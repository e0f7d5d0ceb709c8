package gateway_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/npmtest"
)

// The gateway forwards completion/complete for a prompt to the server
// that offers it (server-everything's completable-prompt), and completes
// an unknown ref to nothing.
func TestCompletionThroughGateway(t *testing.T) {
	p := npmtest.Install(t)
	def := config.Server{Type: config.TypeStdio, Command: p.Node, Args: []string{p.Everything}}
	everything := config.ResolvedServer{Name: "everything", Written: def, Effective: def, Scope: config.ScopeUser, Trust: config.TrustUser, Availability: config.Available}
	f := start(t, nil, everything, stdio("echo", "echo"))
	ctx := ctxFor(t, 60*time.Second)
	res, err := f.session.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "everything:completable-prompt"},
		Argument: mcp.CompleteParamsArgument{Name: "department", Value: "S"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Sales", "Support"}, res.Completion.Values); diff != "" {
		t.Errorf("completion (-want +got):\n%s", diff)
	}
	res, err = f.session.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "nobody:nothing"},
		Argument: mcp.CompleteParamsArgument{Name: "x", Value: ""},
	})
	if err != nil || len(res.Completion.Values) != 0 {
		t.Errorf("unknown prompt: %v %v", err, res)
	}
}

// server-everything's resource templates (demo://resource/dynamic/…) are
// listed through the gateway, a URI built from one is read — text and
// blob — and the template's variable completes through the gateway. A
// second instance offers the same templates: they are listed once, and
// when the first instance is paused the second serves the reads.
func TestEverythingTemplatesThroughGateway(t *testing.T) {
	p := npmtest.Install(t)
	def := config.Server{Type: config.TypeStdio, Command: p.Node, Args: []string{p.Everything}}
	everything := func(name string) config.ResolvedServer {
		return config.ResolvedServer{Name: name, Written: def, Effective: def, Scope: config.ScopeUser, Trust: config.TrustUser, Availability: config.Available}
	}
	f, changed := resourceFixture(t, everything("everything"), everything("everything2"))
	ctx := ctxFor(t, 60*time.Second)
	const textTmpl, blobTmpl = "demo://resource/dynamic/text/{resourceId}", "demo://resource/dynamic/blob/{resourceId}"
	got := templateURIs(t, ctx, f.session)
	if diff := cmp.Diff([]string{blobTmpl, textTmpl}, got); diff != "" {
		t.Errorf("templates (-want +got):\n%s", diff)
	}

	isText5 := func(text string, err error) bool {
		return err == nil && strings.HasPrefix(text, "Resource 5: This is a plaintext resource")
	}
	text, err := readText(ctx, f.session, "demo://resource/dynamic/text/5")
	if !isText5(text, err) {
		t.Errorf("read text/5 = %q, %v", text, err)
	}
	rr, err := f.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://resource/dynamic/blob/3"})
	if err != nil || len(rr.Contents) != 1 || !strings.HasPrefix(string(rr.Contents[0].Blob), "Resource 3: This is a base64 blob") {
		t.Errorf("read blob/3 = %+v, %v", rr, err)
	}
	// The server's own refusal (an id that is not a number) reaches the
	// client as an error.
	if _, err := readText(ctx, f.session, "demo://resource/dynamic/text/abc"); err == nil {
		t.Error("read text/abc: no error")
	}

	res, err := f.session.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: textTmpl},
		Argument: mcp.CompleteParamsArgument{Name: "resourceId", Value: "7"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"7"}, res.Completion.Values); diff != "" {
		t.Errorf("completion of {resourceId} (-want +got):\n%s", diff)
	}

	drain(changed)
	if err := f.h.Pause("everything"); err != nil {
		t.Fatal(err)
	}
	waitReadFunc(t, ctx, f, changed, "demo://resource/dynamic/text/5", "resource 5 from everything2", isText5)
}
