package testserver

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The elicit server asks its caller questions during tool calls, the way a
// real server does on protocol 2026-07-28: its tools answer with input
// requests (multi round-trip, SEP-2322) and finish when the call comes
// back with the answers. The SDK turns those into elicitation/create
// requests for an older client. It counts every tools/call it handles, so a
// test can see whether a call (or a retry) reached it.
func init() {
	register("elicit", serverDef{
		doc: "questions during calls (multi round-trip input requests): ask (one question), ask_twice (a second " +
			"question after the first is answered), ask_both (two questions at once), ask_form (the message and form given); calls reports how many " +
			"tools/call requests the server has handled, itself included; -protocol 2025-11-25 makes them elicitation/create requests; -unprompted asks a question while no call is running",
		inProcess: true,
		setup: func(fs *flag.FlagSet, p *proc) func(context.Context) error {
			protocol := fs.String("protocol", "", "speak only this protocol revision (2025-11-25: the SDK sends the questions as elicitation/create requests)")
			unprompted := fs.String("unprompted", "", "ask this question (elicitation/create, on 2025-11-25) as soon as the client is initialized, while no call is running")
			p.build = func() *mcp.Server { return newElicitServer(*protocol, *unprompted) }
			return p.buildAndServe
		},
	})
}

type elicitFormIn struct {
	Message string         `json:"message" jsonschema:"the message of the request"`
	Schema  map[string]any `json:"schema,omitempty" jsonschema:"the requested schema: an object of string, number, boolean or enum properties"`
	URL     string         `json:"url,omitempty" jsonschema:"ask in url mode: the URL to open"`
	ID      string         `json:"elicitation_id,omitempty" jsonschema:"the url mode question's elicitation id"`
	Meta    map[string]any `json:"meta,omitempty" jsonschema:"the request's _meta"`
}

type elicitAskIn struct {
	Question string `json:"question,omitempty" jsonschema:"the question to ask (default: What is your favourite colour?)"`
}

// answerSchema is a form with one required string field, name.
func answerSchema(name string) map[string]any {
	return map[string]any{
		"type":       "object",
		"properties": map[string]any{name: map[string]any{"type": "string"}},
		"required":   []any{name},
	}
}

// formQuestion is ask_form's question: the form given, or the URL-mode
// question of the url given.
func formQuestion(in elicitFormIn) *mcp.ElicitParams {
	if in.URL != "" {
		id := in.ID
		if id == "" {
			id = "ask-form-url"
		}
		return &mcp.ElicitParams{Mode: "url", Message: in.Message, URL: in.URL, ElicitationID: id, Meta: in.Meta}
	}
	return &mcp.ElicitParams{Message: in.Message, RequestedSchema: in.Schema, Meta: in.Meta}
}

// answerOf returns the reply to input request key: the field of the same
// name when accepted, else "the user chose <action>".
func answerOf(resp mcp.InputResponse, key string) string {
	r, ok := resp.(*mcp.ElicitResult)
	if !ok {
		return fmt.Sprintf("no answer to %s", key)
	}
	if r.Action != "accept" {
		return "the user chose " + r.Action
	}
	return fmt.Sprint(r.Content[key])
}

func newElicitServer(protocol, unprompted string) *mcp.Server {
	opts := &mcp.ServerOptions{}
	if protocol != "" {
		opts.SupportedProtocolVersions = []string{protocol}
	}
	if unprompted != "" {
		// A question nobody's call led to: asked once the client is
		// ready, outside any request of its.
		opts.InitializedHandler = func(_ context.Context, req *mcp.InitializedRequest) {
			ss := req.Session
			go func() {
				_, _ = ss.Elicit(context.Background(), &mcp.ElicitParams{Message: unprompted, RequestedSchema: answerSchema("answer")})
			}()
		}
	}
	s := mcp.NewServer(implementation("elicit"), opts)
	var calls atomic.Int64
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				calls.Add(1)
			}
			return next(ctx, method, req)
		}
	})

	mcp.AddTool(s, &mcp.Tool{
		Name:        "ask",
		Description: "Asks one question (input request \"answer\") and returns \"answer: <reply>\".",
	}, func(_ context.Context, req *mcp.CallToolRequest, in elicitAskIn) (*mcp.CallToolResult, any, error) {
		resp, ok := req.Params.InputResponses["answer"]
		if !ok {
			q := in.Question
			if q == "" {
				q = "What is your favourite colour?"
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
				"answer": &mcp.ElicitParams{Message: q, RequestedSchema: answerSchema("answer")},
			}}, nil, nil
		}
		return text("answer: " + answerOf(resp, "answer")), nil, nil
	})

	// ask_twice keeps the first answer in the request state, as a server
	// without shared storage does.
	mcp.AddTool(s, &mcp.Tool{
		Name:        "ask_twice",
		Description: "Asks for a name, then for a colour, and returns \"name: <n>, colour: <c>\".",
	}, func(_ context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
		if resp, ok := req.Params.InputResponses["colour"]; ok {
			name, _ := strings.CutPrefix(req.Params.RequestState, "name=")
			return text(fmt.Sprintf("name: %s, colour: %s", name, answerOf(resp, "colour"))), nil, nil
		}
		if resp, ok := req.Params.InputResponses["name"]; ok {
			return &mcp.CallToolResult{
				InputRequests: mcp.InputRequestMap{
					"colour": &mcp.ElicitParams{Message: "Your colour?", RequestedSchema: answerSchema("colour")},
				},
				RequestState: "name=" + answerOf(resp, "name"),
			}, nil, nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
			"name": &mcp.ElicitParams{Message: "Your name?", RequestedSchema: answerSchema("name")},
		}}, nil, nil
	})

	mcp.AddTool(s, &mcp.Tool{
		Name:        "ask_both",
		Description: "Asks two questions at once (input requests \"first\" and \"second\") and returns \"first: <a>, second: <b>\".",
	}, func(_ context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
		r := req.Params.InputResponses
		if r["first"] == nil || r["second"] == nil {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
				"first":  &mcp.ElicitParams{Message: "First?", RequestedSchema: answerSchema("first")},
				"second": &mcp.ElicitParams{Message: "Second?", RequestedSchema: answerSchema("second")},
			}}, nil, nil
		}
		return text(fmt.Sprintf("first: %s, second: %s", answerOf(r["first"], "first"), answerOf(r["second"], "second"))), nil, nil
	})

	// ask_form asks with whatever message and form the caller gives (or
	// in url mode, with the URL and elicitation id given), with the _meta
	// given: a server writes all of it, so a test can put a hostile
	// server's words in them.
	mcp.AddTool(s, &mcp.Tool{
		Name:        "ask_form",
		Description: "Asks with the message and requested schema given, or the URL-mode question of the url given (input request \"form\"), and returns \"form: <the answers as JSON>\" or \"the user chose <action>\".",
	}, func(_ context.Context, req *mcp.CallToolRequest, in elicitFormIn) (*mcp.CallToolResult, any, error) {
		resp, ok := req.Params.InputResponses["form"].(*mcp.ElicitResult)
		if !ok {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
				"form": formQuestion(in),
			}}, nil, nil
		}
		if resp.Action != "accept" {
			return text("the user chose " + resp.Action), nil, nil
		}
		b, _ := json.Marshal(resp.Content)
		return text("form: " + string(b)), nil, nil
	})

	mcp.AddTool(s, &mcp.Tool{
		Name:        "calls",
		Description: "Returns \"calls: <n>\": the tools/call requests this server has handled, this one included.",
	}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
		return text(fmt.Sprintf("calls: %d", calls.Load())), nil, nil
	})
	return s
}
