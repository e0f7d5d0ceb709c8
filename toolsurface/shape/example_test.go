package shape_test

import (
	"encoding/json"
	"fmt"

	"github.com/switchboard-mcp/switchboard/toolsurface"
	"github.com/switchboard-mcp/switchboard/toolsurface/shape"
)

func ExampleTools() {
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
	for _, p := range shape.Providers() {
		out, err := shape.Tools(p, tools)
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

func ExampleSchema() {
	schema := json.RawMessage(`{
		"anyOf": [
			{"properties": {"id": {"$ref": "#/$defs/id"}}, "required": ["id"]},
			{"properties": {"name": {"type": ["string", "null"]}}, "required": ["name"]}
		],
		"$defs": {"id": {"type": "integer", "exclusiveMinimum": 0}}
	}`)
	for _, p := range []shape.Provider{shape.Anthropic, shape.Gemini} {
		b, _ := json.Marshal(shape.Schema(p, schema))
		fmt.Printf("%s: %s\n", p, b)
	}
	// Output:
	// anthropic: {"$defs":{"id":{"exclusiveMinimum":0,"type":"integer"}},"properties":{"id":{"$ref":"#/$defs/id"},"name":{"type":["string","null"]}},"type":"object"}
	// gemini: {"properties":{"id":{"description":"(must be greater than 0)","minimum":0,"type":"integer"},"name":{"nullable":true,"type":"string"}},"type":"object"}
}

func ExampleParseProvider() {
	p, err := shape.ParseProvider(" Gemini ")
	fmt.Println(p, err)
	_, err = shape.ParseProvider("cohere")
	fmt.Println(err)
	// Output:
	// gemini <nil>
	// unknown provider "cohere": use openai, anthropic or gemini
}
