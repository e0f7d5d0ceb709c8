package console

import (
	"net/http"
	"net/url"
	"testing"
)

// FuzzFormArgs feeds the playground's form reader arbitrary fields: it
// never panics, a missing required field is always an error, and a field
// it accepts has the type the schema says.
func FuzzFormArgs(f *testing.F) {
	schema := map[string]any{
		"type":     "object",
		"required": []any{"text"},
		"properties": map[string]any{
			"text":  map[string]any{"type": "string"},
			"n":     map[string]any{"type": "integer"},
			"x":     map[string]any{"type": "number"},
			"b":     map[string]any{"type": "boolean"},
			"obj":   map[string]any{"type": "object"},
			"multi": map[string]any{"type": []any{"string", "null"}},
		},
	}
	f.Add("hi", "3", "1.5", "on", `{"a":1}`, "")
	f.Add("", "x", "nan", "", "{", `{"text":"j"}`)
	f.Add("a", "99999999999999999999", "1e400", "true", "[]", "[1]")
	f.Fuzz(func(t *testing.T, text, n, x, b, obj, js string) {
		form := url.Values{"arg.text": {text}, "arg.n": {n}, "arg.x": {x}, "arg.b": {b}, "arg.obj": {obj}, "arg.multi": {text}, "json": {js}}
		r := &http.Request{PostForm: form}
		args, err := formArgs(r, schema)
		if err != nil {
			return
		}
		if js != "" {
			return // the JSON object as given
		}
		if _, ok := args["text"].(string); !ok {
			t.Fatalf("required text accepted as %#v", args["text"])
		}
		if v, ok := args["n"]; ok {
			if _, isInt := v.(int64); !isInt {
				t.Fatalf("integer n accepted as %#v", v)
			}
		}
		if v, ok := args["x"]; ok {
			if _, isNum := v.(float64); !isNum {
				t.Fatalf("number x accepted as %#v", v)
			}
		}
	})
}
