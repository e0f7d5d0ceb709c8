package host_test

import (
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
)

// TestSecretsInTheFormsServersPrintThem: a server that prints the secret
// Switchboard gave it as it went out — query-escaped in a url it called,
// inside the base64 of a Basic authorization header it sent, escaped in
// the JSON of its configuration — does not hand it to the model. Before,
// only the value as it is was replaced, and each form reached the model
// whole.
func TestSecretsInTheFormsServersPrintThem(t *testing.T) {
	const token = "tok+live/9c8b&7a6f=5e4d<3c2b1a0f"
	h := encodedSmuggler(t, token)

	res := mustCall(t, h, "mcp__smug__encoded", map[string]any{})
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	if len(texts) != 3 {
		t.Fatalf("result: %s", unescapedJSON(t, res))
	}
	if got := texts[0]; strings.Contains(got, url.QueryEscape(token)) || got != "GET https://api.example.com/v1?key=<redacted>" {
		t.Errorf("the query-escaped token reached the model: %q", got)
	}
	if got := texts[2]; got != `config: {"api_key":"<redacted>"}` {
		t.Errorf("the token in JSON reached the model: %q", got)
	}
	got := texts[1]
	if !strings.HasPrefix(got, "Authorization: Basic ") || !strings.Contains(got, "<redacted>") {
		t.Fatalf("the Basic header was not redacted: %q", got)
	}
	// What is left of the base64 on either side holds no run of the
	// token's bytes.
	for _, part := range strings.Split(strings.TrimPrefix(got, "Authorization: Basic "), "<redacted>") {
		for cut := 0; cut < 4 && cut < len(part); cut++ {
			b, _ := base64.RawStdEncoding.DecodeString(strings.TrimRight(part[cut:], "="))
			for i := 0; i+6 <= len(token); i++ {
				if strings.Contains(string(b), token[i:i+6]) {
					t.Fatalf("the Basic header still carries %q of the token: %q", token[i:i+6], got)
				}
			}
		}
	}
}

// TestSecretsNotInBlobsOrResourceReads: a secret Switchboard gave a
// server is replaced in the bytes of a blob a result carries, and in a
// resource read — its text and its blob — as in a result's text. Before,
// a read passed the server's contents as they came, and a result's blob
// was never looked at: both handed the token to a gateway's client and
// to `switchboard read`.
func TestSecretsNotInBlobsOrResourceReads(t *testing.T) {
	const token = "tok_live_5e4d3c2b1a0f9c8b7a6f"
	h := encodedSmuggler(t, token)

	res := mustCall(t, h, "mcp__smug__encoded", map[string]any{})
	var blob []byte
	for _, c := range res.Content {
		if er, ok := c.(*mcp.EmbeddedResource); ok && er.Resource != nil {
			blob = er.Resource.Blob
		}
	}
	if string(blob) != "API_KEY=<redacted>\n" {
		t.Errorf("the result's blob: %q", blob)
	}

	rr, err := h.ReadResource(ctxFor(t, 20*time.Second), "smug", "smuggler://config.env")
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Contents) != 2 || rr.Contents[0].Text != "API_KEY=<redacted>\n" || string(rr.Contents[1].Blob) != "API_KEY=<redacted>\n" {
		t.Errorf("the read: %s", unescapedJSON(t, rr))
	}
	if strings.Contains(string(unescapedJSON(t, rr)), token) {
		t.Errorf("the read holds the token: %s", unescapedJSON(t, rr))
	}
}

// TestSecretsNotInReadOrPromptErrors: a server's error to a resource read
// or a prompt holds no secret value Switchboard gave a server, as a tool
// call's does not. Before, both errors came back as the server wrote them.
func TestSecretsNotInReadOrPromptErrors(t *testing.T) {
	const token = "tok_live_0f9e8d7c6b5a4f3e2d1c"
	h := encodedSmuggler(t, token)
	ctx := ctxFor(t, 20*time.Second)

	_, err := h.ReadResource(ctx, "smug", "smuggler://fail")
	if err == nil || strings.Contains(err.Error(), token) || !strings.Contains(err.Error(), "cannot read with key <redacted>") {
		t.Errorf("read: %v", err)
	}
	_, err = h.GetPrompt(ctx, "smug", "fail", nil)
	if err == nil || strings.Contains(err.Error(), token) || !strings.Contains(err.Error(), "cannot render with key <redacted>") {
		t.Errorf("prompt: %v", err)
	}
}

// TestSecretSplitAcrossTextBlocks: a secret Switchboard gave a server,
// written in pieces over consecutive text blocks (which a client reads
// one after the other), is replaced: the blocks it spans become one. The
// blocks around are kept as they are.
func TestSecretSplitAcrossTextBlocks(t *testing.T) {
	const token = "tok_live_a1b2c3d4e5f6a7b8c9d0"
	h := encodedSmuggler(t, token)

	res := mustCall(t, h, "mcp__smug__split", map[string]any{})
	var got []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			got = append(got, c.Text)
		case *mcp.ImageContent:
			got = append(got, "image "+c.MIMEType)
		}
	}
	want := []string{"the key is <redacted> (in pieces)", "image image/png", "after"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("blocks %q, want %q", got, want)
	}
}

// encodedSmuggler is a host of one server, "smug" (the smuggler's
// -encoded tools), given token as its SMUGGLER_API_TOKEN: a secret
// Switchboard gave it, which the server prints in other forms.
func encodedSmuggler(t *testing.T, token string) *host.Host {
	t.Helper()
	smug := stdio("smug", "smuggler", "-encoded")
	smug.Effective.Env = map[string]string{"SMUGGLER_API_TOKEN": token}
	smug.Written.Env = smug.Effective.Env
	return newHost(t, cfgOf(smug), nil)
}

// TestSecretInAnotherCase: a known value of 16 bytes or more is replaced
// in upper and in lower case too — a hex token a server prints with %X is
// the same token — while a shorter one (a password that is also a word)
// is replaced only as it was given. Before, a server that upper-cased its
// token handed it to the model.
func TestSecretInAnotherCase(t *testing.T) {
	const token = "9f86d081884c7d659a2feaa0c55ad015"
	peer := stdio("peer", "hostile-peer", "-leak", "PEER_API_TOKEN")
	peer.Effective.Env = map[string]string{"PEER_API_TOKEN": token}
	word := stdio("word", "hostile-peer", "-leak", "DB_PASSWORD")
	word.Effective.Env = map[string]string{"DB_PASSWORD": "Postgres"}
	h := newHost(t, cfgOf(peer, word), nil)
	b := string(unescapedJSON(t, mustCall(t, h, "mcp__peer__shout", map[string]any{})))
	if strings.Contains(strings.ToLower(b), token) || !strings.Contains(b, "upper <redacted> lower <redacted>") {
		t.Errorf("the token in another case reached the model: %s", b)
	}
	if b := string(unescapedJSON(t, mustCall(t, h, "mcp__word__shout", map[string]any{}))); !strings.Contains(b, "upper POSTGRES lower postgres") {
		t.Errorf("a short value was replaced in another case: %s", b)
	}
}

// TestSecretsNotInReadOrPromptMeta: a resource read's _meta (its own and
// each content's) and a rendered prompt's _meta and image data have the
// secret values Switchboard gave servers replaced, as a result's do: a
// gateway passes them on to its client. Before, only their text was.
func TestSecretsNotInReadOrPromptMeta(t *testing.T) {
	const token = "tok_live_1a2b3c4d5e6f7a8b9c0d"
	peer := stdio("peer", "hostile-peer", "-leak", "PEER_API_TOKEN")
	peer.Effective.Env = map[string]string{"PEER_API_TOKEN": token}
	h := newHost(t, cfgOf(peer), nil)
	ctx := ctxFor(t, 20*time.Second)
	read, err := h.ReadResource(ctx, "peer", "leak://readme")
	if err != nil {
		t.Fatal(err)
	}
	if b := string(unescapedJSON(t, read)); strings.Contains(b, token) || strings.Count(b, `"key <redacted>":"meta <redacted>"`) != 2 {
		t.Errorf("read: %s", b)
	}
	prompt, err := h.GetPrompt(ctx, "peer", "leaky_prompt", nil)
	if err != nil {
		t.Fatal(err)
	}
	b := string(unescapedJSON(t, prompt))
	if strings.Contains(b, token) || !strings.Contains(b, `"key <redacted>":"meta <redacted>"`) {
		t.Errorf("prompt: %s", b)
	}
	if len(prompt.Messages) != 2 {
		t.Fatalf("prompt messages: %s", b)
	}
	if img, ok := prompt.Messages[1].Content.(*mcp.ImageContent); !ok || string(img.Data) != "image <redacted>" {
		t.Errorf("the prompt's image: %s", unescapedJSON(t, prompt.Messages[1]))
	}
}
