package shape_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/npmtest"
	"github.com/switchboard-mcp/switchboard/toolsurface"
	"github.com/switchboard-mcp/switchboard/toolsurface/shape"
)

// The -update flag rewrites golden files. Another test file of this binary
// may define it first; then that definition is used.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files and snapshots")
	}
}

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// corpusTool is one tool of the provider corpus, as a server lists it.
type corpusTool struct {
	Server      string          `json:"server"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

const npmSnapshot = "testdata/providers/npm_tools.json"

// TestNPMToolSnapshot keeps testdata/providers/npm_tools.json equal to the
// tools the pinned npm reference servers list, so the provider goldens are
// built from real third-party schemas. Run with -update to refresh it.
func TestNPMToolSnapshot(t *testing.T) {
	if testing.Short() {
		t.Skip("starts node servers")
	}
	p := npmtest.Install(t)
	servers := []struct {
		name string
		args []string
		env  []string
	}{
		{"everything", []string{p.Everything}, nil},
		{"filesystem", []string{p.Filesystem, t.TempDir()}, nil},
		{"memory", []string{p.Memory}, []string{"MEMORY_FILE_PATH=" + filepath.Join(t.TempDir(), "memory.jsonl")}},
	}
	var got []corpusTool
	for _, s := range servers {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.Command(p.Node, s.args...)
		cmd.Env = append(os.Environ(), s.env...)
		client := mcp.NewClient(&mcp.Implementation{Name: "toolsurface-test", Version: "v0"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			cancel()
			t.Fatalf("%s: connect: %v", s.name, err)
		}
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatalf("%s: tools/list: %v", s.name, err)
		}
		for _, tool := range res.Tools {
			schema, err := json.Marshal(tool.InputSchema)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, corpusTool{Server: s.name, Name: tool.Name, Description: tool.Description, InputSchema: schema})
		}
		cs.Close()
		cancel()
	}
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	compareGolden(t, npmSnapshot, append(b, '\n'))
}

// compareGolden compares got with the file at path, or rewrites the file
// with -update.
func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if updating() {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs (-want +got; run go test -update if the change is right):\n%s", path, cmp.Diff(string(want), string(got)))
	}
}

// corpus returns the provider corpus: the npm reference servers' tools from
// the snapshot, the nasty schemas of nasty.json, and a tool with a 1 MB
// description and a 1,000-character name.
func corpus(t testing.TB) []corpusTool {
	t.Helper()
	var tools []corpusTool
	for _, path := range []string{npmSnapshot, "testdata/providers/nasty.json"} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var part []corpusTool
		if err := json.Unmarshal(b, &part); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		tools = append(tools, part...)
	}
	tools = append(tools, corpusTool{
		Server: "nasty", Name: strings.Repeat("n", 1000),
		Description: strings.Repeat("A one-megabyte description. ", 1<<20/28+1),
		InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","description":"` + strings.Repeat("d", 5000) + `"}}}`),
	})
	return tools
}

// shapeInput turns the corpus into Shape's input, registering every server
// with a Router as the runtime does.
func shapeInput(t testing.TB, tools []corpusTool) ([]toolsurface.Tool, *toolsurface.Router) {
	t.Helper()
	r := toolsurface.NewRouter()
	byServer := map[string][]string{}
	var order []string
	for _, c := range tools {
		if byServer[c.Server] == nil {
			order = append(order, c.Server)
		}
		byServer[c.Server] = append(byServer[c.Server], c.Name)
	}
	for _, s := range order {
		if err := r.AddServer(s, byServer[s]); err != nil {
			t.Fatal(err)
		}
	}
	var in []toolsurface.Tool
	for _, c := range tools {
		name, ok := r.Name(c.Server, c.Name)
		if !ok {
			t.Fatalf("router has no name for %s/%s", c.Server, c.Name)
		}
		in = append(in, toolsurface.Tool{Name: name, Description: c.Description, InputSchema: c.InputSchema})
	}
	return in, r
}

// TestShapeGolden pins each provider's shape of the corpus in
// testdata/providers/<provider>.golden (-update rewrites them).
func TestShapeGolden(t *testing.T) {
	in, _ := shapeInput(t, corpus(t))
	for _, p := range shape.Providers() {
		t.Run(string(p), func(t *testing.T) {
			out, err := shape.Tools(p, in)
			if err != nil {
				t.Fatal(err)
			}
			compareGolden(t, filepath.Join("testdata", "providers", string(p)+".golden"), indentArray(t, out))
		})
	}
}

func indentArray(t testing.TB, items []json.RawMessage) []byte {
	t.Helper()
	b, err := json.Marshal(items)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, "", "  "); err != nil {
		t.Fatal(err)
	}
	buf.WriteByte('\n')
	return buf.Bytes()
}

// TestShapeProperties checks, for every provider and every corpus tool, the
// guarantees of Shape and CleanSchema: the provider's own shape, a legal
// name that the Router maps back to the server's tool, a capped
// description, and a schema with no keyword the provider rejects.
func TestShapeProperties(t *testing.T) {
	tools := corpus(t)
	in, r := shapeInput(t, tools)
	snapshot := func() []byte { b, _ := json.Marshal(in); return b }
	before := snapshot()
	for _, p := range shape.Providers() {
		out, err := shape.Tools(p, in)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != len(in) {
			t.Fatalf("%s: %d tools in, %d out", p, len(in), len(out))
		}
		for i, raw := range out {
			name, desc, params, hasParams := unshape(t, p, raw)
			server, tool, ok := r.Resolve(name)
			if !ok || server != tools[i].Server || tool != tools[i].Name {
				t.Errorf("%s: %s resolves to (%q, %q, %v), want (%q, %q)", p, name, server, tool, ok, tools[i].Server, tools[i].Name)
			}
			if len([]rune(desc)) > toolsurface.DefaultDescriptionCap {
				t.Errorf("%s: %s: description of %d runes", p, name, len([]rune(desc)))
			}
			if !hasParams {
				if p != shape.Gemini {
					t.Errorf("%s: %s has no parameters", p, name)
				}
				continue
			}
			for _, problem := range checkSchema(p, params) {
				t.Errorf("%s: %s: %s", p, name, problem)
			}
		}
	}
	if !bytes.Equal(before, snapshot()) {
		t.Error("Shape modified its input")
	}
}

// unshape reads a shaped tool back: name, description and parameters.
func unshape(t testing.TB, p shape.Provider, raw json.RawMessage) (name, desc string, params map[string]any, has bool) {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("%s: shaped tool is not JSON: %v", p, err)
	}
	want := map[shape.Provider][]string{
		shape.OpenAI:    {"function", "type"},
		shape.Anthropic: {"description", "input_schema", "name"},
		shape.Gemini:    {"description", "name", "parameters"},
	}[p]
	keys := func(m map[string]any) string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		return fmt.Sprint(sortStrings(ks))
	}
	switch p {
	case shape.OpenAI:
		if keys(m) != fmt.Sprint(want) || m["type"] != "function" {
			t.Fatalf("openai tool %s has keys %s", raw[:min(len(raw), 200)], keys(m))
		}
		fn := m["function"].(map[string]any)
		if keys(fn) != "[description name parameters]" {
			t.Fatalf("openai function has keys %s", keys(fn))
		}
		params, has = fn["parameters"].(map[string]any)
		return fn["name"].(string), fn["description"].(string), params, has
	case shape.Anthropic:
		if keys(m) != fmt.Sprint(want) {
			t.Fatalf("anthropic tool has keys %s", keys(m))
		}
		params, has = m["input_schema"].(map[string]any)
		return m["name"].(string), m["description"].(string), params, has
	default:
		if k := keys(m); k != fmt.Sprint(want) && k != "[description name]" {
			t.Fatalf("gemini declaration has keys %s", k)
		}
		params, has = m["parameters"].(map[string]any)
		return m["name"].(string), m["description"].(string), params, has
	}
}

func sortStrings(s []string) []string {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}

var geminiKeys = map[string]bool{
	"type": true, "format": true, "title": true, "description": true, "nullable": true,
	"enum": true, "items": true, "properties": true, "required": true, "propertyOrdering": true,
	"anyOf": true, "minimum": true, "maximum": true, "minItems": true, "maxItems": true,
	"minLength": true, "maxLength": true, "minProperties": true, "maxProperties": true,
	"pattern": true, "example": true, "default": true,
}

// checkSchema walks a cleaned parameters schema (keywords only, never
// property names or data) and lists what provider p would reject.
func checkSchema(p shape.Provider, root map[string]any) []string {
	var problems []string
	bad := func(path, format string, args ...any) {
		problems = append(problems, path+": "+fmt.Sprintf(format, args...))
	}
	if root["type"] != "object" {
		bad("$", "root type is %v", root["type"])
	}
	if _, ok := root["properties"].(map[string]any); !ok {
		bad("$", "root has no properties object")
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf", "not", "enum", "const", "if", "then", "else"} {
		if _, ok := root[k]; ok {
			bad("$", "root holds %s", k)
		}
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		m, ok := v.(map[string]any)
		if _, isBool := v.(bool); isBool && p != shape.Gemini && !strings.Contains(path[strings.LastIndex(path, ".")+1:], "properties[") {
			return // boolean schemas are JSON Schema; only property schemas must be objects
		}
		if !ok {
			bad(path, "schema is %T, not an object", v)
			return
		}
		if _, ok := m["$schema"]; ok {
			bad(path, "$schema present")
		}
		if d, ok := m["description"]; ok {
			if s, ok := d.(string); !ok || len([]rune(s)) > toolsurface.DefaultDescriptionCap+64 {
				bad(path, "description not a capped string")
			}
		}
		typ, _ := m["type"].(string)
		isObject := typ == "object"
		isArray := typ == "array"
		if list, ok := m["type"].([]any); ok {
			for _, x := range list {
				isObject = isObject || x == "object"
				isArray = isArray || x == "array"
			}
		}
		if isObject {
			if _, ok := m["properties"].(map[string]any); !ok {
				bad(path, "object without properties")
			}
		}
		if p == shape.Gemini {
			for k := range m {
				if !geminiKeys[k] {
					bad(path, "keyword %s is not in Gemini's Schema", k)
				}
			}
			if _, ok := m["type"]; ok && typ == "" {
				bad(path, "type %v is not one type", m["type"])
			}
			if typ == "null" {
				bad(path, "type null")
			}
			if props, ok := m["properties"].(map[string]any); ok && (typ != "object" || (len(props) == 0 && path != "$")) {
				bad(path, "properties on type %q (%d of them)", typ, len(props))
			}
			if _, ok := m["required"]; ok && typ != "object" {
				bad(path, "required on type %q", typ)
			}
			if _, ok := m["items"]; ok != (typ == "array") {
				bad(path, "items present=%v on type %q", ok, typ)
			}
			if enum, ok := m["enum"].([]any); ok {
				if typ != "string" {
					bad(path, "enum on type %q", typ)
				}
				for _, e := range enum {
					if _, ok := e.(string); !ok {
						bad(path, "enum value %v is not a string", e)
					}
				}
			}
			if f, ok := m["format"].(string); ok {
				allowed := map[string]string{"enum": "string", "date-time": "string", "float": "number", "double": "number", "int32": "integer", "int64": "integer"}
				if allowed[f] != typ {
					bad(path, "format %q on type %q", f, typ)
				}
			}
			if req, ok := m["required"].([]any); ok {
				props, _ := m["properties"].(map[string]any)
				for _, r := range req {
					if _, ok := props[r.(string)]; !ok {
						bad(path, "required %v is not a property", r)
					}
				}
			}
		} else {
			for _, k := range []string{"exclusiveMinimum", "exclusiveMaximum"} {
				if _, ok := m[k].(bool); ok {
					bad(path, "%s is a boolean (draft-04)", k)
				}
			}
			for _, k := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength", "minItems", "maxItems"} {
				if v, ok := m[k]; ok {
					if _, isNum := v.(json.Number); !isNum {
						bad(path, "%s is %T, not a number", k, v)
					}
				}
			}
			if r, ok := m["required"]; ok {
				list, isList := r.([]any)
				if !isList {
					bad(path, "required is %T", r)
				}
				for _, x := range list {
					if _, ok := x.(string); !ok {
						bad(path, "required holds %T", x)
					}
				}
			}
			if isArray {
				_, items := m["items"].(map[string]any)
				_, prefix := m["prefixItems"].([]any)
				if !items && !prefix {
					bad(path, "array without an items schema")
				}
			}
		}
		for _, k := range []string{"items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames"} {
			if sub, ok := m[k]; ok {
				walk(path+"."+k, sub)
			}
		}
		for _, k := range []string{"properties", "patternProperties", "$defs", "definitions"} {
			if sub, ok := m[k].(map[string]any); ok {
				for name, s := range sub {
					walk(path+"."+k+"["+name+"]", s)
				}
			}
		}
		for _, k := range []string{"allOf", "anyOf", "oneOf", "prefixItems"} {
			if list, ok := m[k].([]any); ok {
				for i, s := range list {
					walk(fmt.Sprintf("%s.%s[%d]", path, k, i), s)
				}
			}
		}
	}
	walk("$", root)
	return problems
}

func TestParseProvider(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want shape.Provider
		err  string
	}{
		{"openai", shape.OpenAI, ""},
		{" Anthropic ", shape.Anthropic, ""},
		{"GEMINI", shape.Gemini, ""},
		{"", "", `unknown provider "": use openai, anthropic or gemini`},
		{"claude", "", `unknown provider "claude": use openai, anthropic or gemini`},
	} {
		got, err := shape.ParseProvider(tt.in)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if got != tt.want || gotErr != tt.err {
			t.Errorf("ParseProvider(%q) = %q, %q; want %q, %q", tt.in, got, gotErr, tt.want, tt.err)
		}
	}
}

func TestShapeErrors(t *testing.T) {
	if _, err := shape.Tools("cohere", nil); err == nil || !strings.Contains(err.Error(), `unknown provider "cohere"`) {
		t.Errorf("unknown provider: err = %v", err)
	}
	for _, name := range []string{"", "has space", strings.Repeat("a", 65), "mcp__s__é"} {
		_, err := shape.Tools(shape.OpenAI, []toolsurface.Tool{{Name: "ok"}, {Name: name}})
		if err == nil || !strings.Contains(err.Error(), "tool 1: name") {
			t.Errorf("name %q: err = %v", name, err)
		}
	}
	out, err := shape.Tools(shape.Anthropic, nil)
	if err != nil || len(out) != 0 {
		t.Errorf("no tools: %v, %v", out, err)
	}
}

// TestCleanSchemaRewrites spells out the rewrites the goldens hold, one
// per case, so a regression names the rule it broke.
func TestCleanSchemaRewrites(t *testing.T) {
	j := func(s string) json.RawMessage { return json.RawMessage(s) }
	for _, tt := range []struct {
		name   string
		p      shape.Provider
		schema json.RawMessage
		want   string
	}{
		{"true is the empty object", shape.OpenAI, j(`true`), `{"properties":{},"type":"object"}`},
		{"boolean property schemas", shape.Anthropic,
			j(`{"properties":{"any":true,"never":false},"required":["never","any"],"additionalProperties":false}`),
			`{"additionalProperties":false,"properties":{"any":{}},"required":["any"],"type":"object"}`},
		{"root oneOf: a property in several branches gets each schema", shape.OpenAI,
			j(`{"oneOf":[{"properties":{"mode":{"const":"id"},"id":{"type":"integer"}},"required":["mode","id"]},{"properties":{"mode":{"const":"path"}},"required":["mode"]}]}`),
			`{"properties":{"id":{"type":"integer"},"mode":{"anyOf":[{"const":"id"},{"const":"path"}]}},"required":["mode"],"type":"object"}`},
		{"$schema dropped, nested too", shape.Anthropic,
			j(`{"$schema":"x","type":"object","properties":{"a":{"$schema":"y","type":"string"}}}`),
			`{"properties":{"a":{"type":"string"}},"type":"object"}`},
		{"draft-04 exclusive bound to numeric", shape.OpenAI,
			j(`{"properties":{"n":{"type":"number","minimum":5,"exclusiveMinimum":true,"maximum":9,"exclusiveMaximum":false}}}`),
			`{"properties":{"n":{"exclusiveMinimum":5,"maximum":9,"type":"number"}},"type":"object"}`},
		{"array gets items", shape.OpenAI, j(`{"properties":{"l":{"type":"array"}}}`),
			`{"properties":{"l":{"items":{},"type":"array"}},"type":"object"}`},
		{"root anyOf merged, required in every branch kept", shape.Anthropic,
			j(`{"anyOf":[{"properties":{"a":{"type":"string"},"m":{"type":"string"}},"required":["m","a"]},{"properties":{"b":{"type":"string"}},"required":["m","b"]}]}`),
			`{"properties":{"a":{"type":"string"},"b":{"type":"string"},"m":{"type":"string"}},"required":["m"],"type":"object"}`},
		{"gemini: nullable type list", shape.Gemini, j(`{"properties":{"s":{"type":["string","null"]}}}`),
			`{"properties":{"s":{"nullable":true,"type":"string"}},"type":"object"}`},
		{"gemini: Optional[int] hoisted", shape.Gemini, j(`{"properties":{"i":{"anyOf":[{"type":"integer"},{"type":"null"}],"title":"I"}}}`),
			`{"properties":{"i":{"nullable":true,"title":"I","type":"integer"}},"type":"object"}`},
		{"gemini: const to enum", shape.Gemini, j(`{"properties":{"k":{"const":"x"}}}`),
			`{"properties":{"k":{"enum":["x"],"type":"string"}},"type":"object"}`},
		{"gemini: integer enum to description", shape.Gemini, j(`{"properties":{"k":{"type":"integer","enum":[1,2]}}}`),
			`{"properties":{"k":{"description":"(one of: 1, 2)","type":"integer"}},"type":"object"}`},
		{"gemini: format uri dropped", shape.Gemini, j(`{"properties":{"u":{"type":"string","format":"uri","description":"A link."}}}`),
			`{"properties":{"u":{"description":"A link. (format: uri)","type":"string"}},"type":"object"}`},
		{"gemini: draft-07 exclusive bound", shape.Gemini, j(`{"properties":{"n":{"type":"number","exclusiveMinimum":0}}}`),
			`{"properties":{"n":{"description":"(must be greater than 0)","minimum":0,"type":"number"}},"type":"object"}`},
		{"gemini: $ref inlined, additionalProperties dropped", shape.Gemini,
			j(`{"$defs":{"p":{"type":"object","properties":{"x":{"type":"number"}},"additionalProperties":false}},"properties":{"a":{"$ref":"#/$defs/p"}}}`),
			`{"properties":{"a":{"properties":{"x":{"type":"number"}},"type":"object"}},"type":"object"}`},
		{"gemini: free-form map loses its type", shape.Gemini, j(`{"properties":{"m":{"type":"object","additionalProperties":{"type":"string"}}}}`),
			`{"properties":{"m":{"description":"(a JSON object)"}},"type":"object"}`},
		{"gemini: recursive ref", shape.Gemini,
			j(`{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"},"v":{"type":"string"}}}},"properties":{"head":{"$ref":"#/$defs/n"}}}`),
			`{"properties":{"head":{"properties":{"next":{"description":"(recursive: a value of the same shape as n, described above)"},"v":{"type":"string"}},"type":"object"}},"type":"object"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(shape.Schema(tt.p, tt.schema))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(b)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestCleanSchemaRefBlowup: definitions that refer to each other many
// times over must not expand exponentially for Gemini.
func TestCleanSchemaRefBlowup(t *testing.T) {
	defs := map[string]any{"d0": map[string]any{"type": "string"}}
	for i := 1; i <= 30; i++ {
		props := map[string]any{}
		for j := 0; j < 10; j++ {
			props[fmt.Sprintf("p%d", j)] = map[string]any{"$ref": fmt.Sprintf("#/$defs/d%d", i-1)}
		}
		defs[fmt.Sprintf("d%d", i)] = map[string]any{"type": "object", "properties": props}
	}
	schema := map[string]any{"$defs": defs, "properties": map[string]any{"top": map[string]any{"$ref": "#/$defs/d30"}}}
	b, err := json.Marshal(shape.Schema(shape.Gemini, schema))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 4<<20 {
		t.Errorf("cleaned schema is %d bytes", len(b))
	}
}

// FuzzSchema: whatever JSON a server sends as a schema, every
// provider's cleaned schema holds no keyword that provider rejects, and
// Shape accepts it.
func FuzzSchema(f *testing.F) {
	for _, c := range corpus(f)[:40] {
		f.Add([]byte(c.InputSchema))
	}
	f.Add([]byte(`true`))
	f.Add([]byte(`{"type":["object","null"],"properties":{"a":{"$ref":"#"}}}`))
	f.Add([]byte(`{"properties":{"a":{"allOf":[{"$ref":"#/properties/a"}]}}}`))
	f.Fuzz(func(t *testing.T, schema []byte) {
		for _, p := range shape.Providers() {
			clean := shape.Schema(p, json.RawMessage(schema))
			b, err := json.Marshal(clean)
			if err != nil {
				t.Fatalf("%s: cleaned schema does not marshal: %v", p, err)
			}
			var back map[string]any
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.UseNumber()
			if err := dec.Decode(&back); err != nil {
				t.Fatal(err)
			}
			for _, problem := range checkSchema(p, back) {
				t.Errorf("%s: %s\nin:  %s\nout: %s", p, problem, schema, b)
			}
			if _, err := shape.Tools(p, []toolsurface.Tool{{Name: "mcp__f__t", InputSchema: json.RawMessage(schema)}}); err != nil {
				t.Fatalf("%s: Shape: %v", p, err)
			}
		}
	})
}
