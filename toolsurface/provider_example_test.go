package toolsurface_test

import (
	"encoding/json"
	"fmt"

	"github.com/switchboard-mcp/switchboard/toolsurface"
)

func ExampleShape() {
	schema := json.RawMessage(`{
		"$schema": "http://json-schema.org/draft-07/schema#",
		"type": "object",
		"properties": {
			"url": {"type": "string", "format": "uri"},
			"max_length": {"type": ["integer", "null"], "exclusiveMinimum": 0}
		},
		"required": ["url"],
		"additionalProperties": false
	}`)
	tools := []toolsurface.Tool{{Name: toolsurface.ToolName("fetch", "fetch"), Description: "Fetch a URL.", InputSchema: schema}}
	for _, p := range toolsurface.Providers() {
		out, err := toolsurface.Shape(p, tools)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: %s\n", p, out[0])
	}
	// Output:
	// openai: {"function":{"description":"Fetch a URL.","name":"mcp__fetch__fetch","parameters":{"additionalProperties":false,"properties":{"max_length":{"exclusiveMinimum":0,"type":["integer","null"]},"url":{"format":"uri","type":"string"}},"required":["url"],"type":"object"}},"type":"function"}
	// anthropic: {"description":"Fetch a URL.","input_schema":{"additionalProperties":false,"properties":{"max_length":{"exclusiveMinimum":0,"type":["integer","null"]},"url":{"format":"uri","type":"string"}},"required":["url"],"type":"object"},"name":"mcp__fetch__fetch"}
	// gemini: {"description":"Fetch a URL.","name":"mcp__fetch__fetch","parameters":{"properties":{"max_length":{"description":"(must be greater than 0)","minimum":0,"nullable":true,"type":"integer"},"url":{"description":"(format: uri)","type":"string"}},"required":["url"],"type":"object"}}
}
