package jsonl_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/jsonl"
)

// New picks this package's Transport unless told to take the SDK's, and
// either one carries a session over real pipes.
func TestNewChooses(t *testing.T) {
	for _, sdk := range []bool{false, true} {
		toServer, fromClient := pipe(t)
		toClient, fromServer := pipe(t)
		client := jsonl.New(toClient, fromClient, jsonl.Options{SDK: sdk, Tolerant: true})
		switch tr := client.(type) {
		case *jsonl.Transport:
			if sdk || !tr.Tolerant {
				t.Errorf("SDK %v: got jsonl's Transport %+v", sdk, tr)
			}
		case *mcp.IOTransport:
			if !sdk {
				t.Error("SDK false: got the SDK's IOTransport")
			}
		default:
			t.Fatalf("SDK %v: got %T", sdk, client)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		ss, err := echoServer().Connect(ctx, &mcp.IOTransport{Reader: toServer, Writer: fromServer}, nil)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, client, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
		if err != nil || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "hi" {
			t.Errorf("SDK %v: echo = %+v, %v", sdk, res, err)
		}
		cs.Close()
		ss.Close()
		cancel()
	}
}
