package tasks

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzTaskMessages feeds what a server sends to the adapter's readers of
// the tasks wire format: they never panic, and what they accept holds to
// the bounds the adapter relies on.
func FuzzTaskMessages(f *testing.F) {
	for _, s := range []string{
		`{"taskId":"t1","status":"working","statusMessage":"stage 1","ttl":60000,"pollInterval":5}`,
		`{"resultType":"task","taskId":"t2","status":"input_required","ttlMs":null,"pollIntervalMs":1e12,"inputRequests":{"k":{"method":"elicitation/create","params":{}}}}`,
		`{"task":{"taskId":"t3","status":"completed"}}`,
		`{"taskId":42,"status":["working"]}`,
		`{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"cancel":{},"requests":{"tools":{"call":{}}}}}}`,
		`{"capabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`,
		`{"tools":[{"name":"a","execution":{"taskSupport":"required"}}]}`,
		`{"name":"a","arguments":{},"_meta":{"io.modelcontextprotocol/clientCapabilities":{"extensions":{}}}}`,
		`"garbage"`, `null`, `{"ttl":-1,"taskId":"x","status":"working"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if tk, err := parseTask(data); err == nil {
			if tk.ID == "" || len(tk.ID) > maxTaskID || !utf8.ValidString(tk.ID) {
				t.Fatalf("accepted task id %q", tk.ID)
			}
			if tk.Poll != 0 && (tk.Poll < minPoll || tk.Poll > maxPoll) || tk.TTL < 0 {
				t.Fatalf("accepted poll %v, ttl %v", tk.Poll, tk.TTL)
			}
			if id := shownID(tk.ID); strings.ContainsAny(id, "\x1b\n\r") {
				t.Fatalf("shown id %q", id)
			}
		}
		_, _ = created(revV1, data)
		_, _ = created(revV2, data)
		_, _ = serverSupport(data, false)
		_, _ = serverSupport(data, true)
		_ = taskSupports(data)
		_ = requestMeta(data)
		if out, err := withExtension(data); err == nil && !json.Valid(out) {
			t.Fatalf("withExtension made invalid JSON %q", out)
		} else if err == nil && !bytes.Contains(out, []byte(extensionID)) {
			t.Fatalf("withExtension did not declare the extension: %q", out)
		}
		if out, err := withTaskField(data, 0); err == nil && !json.Valid(out) {
			t.Fatalf("withTaskField made invalid JSON %q", out)
		}
	})
}

// FuzzEvents feeds event streams to the adapter's SSE reader.
func FuzzEvents(f *testing.F) {
	f.Add([]byte("event: message\ndata: {\"a\":1}\n\n"))
	f.Add([]byte("data: x\r\ndata: y\r\n\r\nid: 3\n\n"))
	f.Add([]byte("data:"))
	f.Fuzz(func(t *testing.T, data []byte) {
		n := 0
		_ = events(bytes.NewReader(data), func(d []byte) bool {
			n++
			if len(d) == 0 {
				t.Fatal("an empty event was handed on")
			}
			return n < 100
		})
	})
}

// FuzzTakeTaskField feeds what a gateway client sends as tools/call
// params (and POST bodies) to the server side's rewriter: the result is
// valid JSON when the input was, holds no top-level task field once
// changed, and only a `task` object asks for a task — never a key the
// client wrote into _meta itself.
func FuzzTakeTaskField(f *testing.F) {
	for _, s := range []string{
		`{"name":"a","task":{"ttl":60000}}`,
		`{"name":"a","_meta":{"switchboard/task":{}},"task":{}}`,
		`{"name":"a","_meta":{"switchboard/task":{}}}`,
		`{"name":"a","_meta":null,"task":null}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","task":{}}}`,
		`{"task":[]}`, `"task"`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, take := range []func([]byte) ([]byte, bool){
			func(b []byte) ([]byte, bool) { return TakeTaskField(b) },
			TakeTaskFieldInBody,
		} {
			out, changed := take(data)
			if !changed {
				if !bytes.Equal(out, data) {
					t.Fatalf("unchanged but different: %q → %q", data, out)
				}
				continue
			}
			if !json.Valid(out) {
				t.Fatalf("%q → invalid %q", data, out)
			}
		}
		out, changed := TakeTaskField(data)
		if !changed {
			return
		}
		var p struct {
			Task *json.RawMessage `json:"task"`
			Meta mcp.Meta         `json:"_meta"`
		}
		if err := json.Unmarshal(out, &p); err != nil {
			return // duplicate keys and the like: the SDK refuses them as ever
		}
		if p.Task != nil {
			t.Fatalf("%q → %q keeps the task field", data, out)
		}
		var in struct {
			Task json.RawMessage `json:"task"`
		}
		_ = json.Unmarshal(data, &in)
		if _, asked := Requested(p.Meta); asked && !isObject(in.Task) {
			t.Fatalf("%q → %q asks for a task without a task object", data, out)
		}
	})
}
