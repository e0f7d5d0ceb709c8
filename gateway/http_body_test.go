package gateway

import (
	"net/http"
	"testing"
)

// A POST body's messages are decoded once for every handler that looks
// (the scale-out router, the revision router, the stateless cancels), as
// long as the body is the same; a body put in its place is decoded anew.
func TestPostMessagesDecodedOnce(t *testing.T) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}`)
	r, _ := http.NewRequest("POST", "http://gw/mcp", nil)
	setPostBody(r, body)
	first := postMessages(r, body)
	if len(first) != 1 || first[0].Method != "tools/call" {
		t.Fatalf("messages: %+v", first)
	}
	setPostBody(r, body) // the next handler in, same body
	if again := postMessages(r, body); &again[0] != &first[0] {
		t.Error("the same body was decoded again")
	}
	other := []byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	setPostBody(r, other)
	if m := postMessages(r, other); len(m) != 1 || m[0].Method != "ping" {
		t.Errorf("a new body read as %+v", m)
	}
	if m := postMessages(r, body); len(m) != 1 || m[0].Method != "tools/call" {
		t.Errorf("a body that is not r's read as %+v", m)
	}
}
