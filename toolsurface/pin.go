package toolsurface

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// LegacyUIResourceKey is the _meta key older MCP Apps link their UI with,
// as "ui/resourceUri" (the current form is _meta.ui.resourceUri).
const LegacyUIResourceKey = "ui/resourceUri"

// Definition returns the canonical JSON of what a model, or a gateway's
// client, is shown of a tool: its name, title, description, input schema,
// annotations and the _meta that reaches a client (an App's "ui" and
// LegacyUIResourceKey), exactly as the server sent them, before
// cleaning. It is what tool pinning stores and digests: two definitions
// are the same exactly when their Definitions are equal. Keys are sorted
// and nothing is HTML-escaped, so it is stable across runs and readable.
func Definition(t *mcp.Tool) json.RawMessage {
	d := definition{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema}
	if a := t.Annotations; a != nil {
		d.Annotations = &annotations{Title: a.Title, ReadOnlyHint: a.ReadOnlyHint, IdempotentHint: a.IdempotentHint,
			DestructiveHint: a.DestructiveHint, OpenWorldHint: a.OpenWorldHint}
	}
	if ui, ok := t.Meta["ui"]; ok {
		d.Meta = map[string]any{"ui": ui}
	}
	if u, ok := t.Meta[LegacyUIResourceKey]; ok {
		if d.Meta == nil {
			d.Meta = map[string]any{}
		}
		d.Meta[LegacyUIResourceKey] = u
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil {
		// A schema that does not encode (it came from JSON, so only an
		// embedder's own value can): pin its error, which changes with it.
		buf.Reset()
		_ = enc.Encode(definition{Name: t.Name, Description: "unencodable definition: " + err.Error()})
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// PromptDefinition returns the canonical JSON of what a model, or a
// person picking a slash command, reads of a prompt: its name, title,
// description and arguments (each one's name, title, description and
// whether it is required, in the server's order), exactly as the server
// sent them, before cleaning. It is what prompt pinning stores and
// digests, as Definition is for a tool; it is compact, with a fixed key
// order and nothing HTML-escaped.
func PromptDefinition(p *mcp.Prompt) json.RawMessage {
	d := promptDefinition{Name: p.Name, Title: p.Title, Description: p.Description}
	for _, a := range p.Arguments {
		if a != nil {
			d.Arguments = append(d.Arguments, promptArgument{Name: a.Name, Title: a.Title, Description: a.Description, Required: a.Required})
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(d) // strings and bools only: it cannot fail
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// promptDefinition is the encoding of PromptDefinition.
type promptDefinition struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []promptArgument `json:"arguments,omitempty"`
}

type promptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// definition is the encoding of Definition; the field order is fixed.
type definition struct {
	Name        string         `json:"name"`
	Title       string         `json:"title,omitempty"`
	Description string         `json:"description,omitempty"`
	InputSchema any            `json:"inputSchema,omitempty"`
	Annotations *annotations   `json:"annotations,omitempty"`
	Meta        map[string]any `json:"_meta,omitempty"`
}

// annotations is mcp.ToolAnnotations encoded one way only (the SDK's
// encoding depends on a GODEBUG setting).
type annotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    bool   `json:"readOnlyHint,omitempty"`
	IdempotentHint  bool   `json:"idempotentHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// DefinitionChange is one field that differs between two Definitions.
type DefinitionChange struct {
	// Field is the field's path: "description", "title",
	// "inputSchema.properties.path.description", "inputSchema.required",
	// "annotations.destructiveHint", "_meta.ui.resourceUri".
	Field string `json:"field"`
	// Old and New are its values (strings as they are, anything else as
	// JSON); "" where it is absent, which Added and Removed say.
	Old     string `json:"old,omitempty"`
	New     string `json:"new,omitempty"`
	Added   bool   `json:"added,omitempty"`
	Removed bool   `json:"removed,omitempty"`
	// Words is the word-level diff of Old and New (WordDiff).
	Words string `json:"words"`
}

// DiffDefinitions lists the fields that differ between two Definitions
// (old pinned, new seen), sorted by field with description and title
// first. A definition that does not decode counts as empty. Its word
// diffs share one budget of DiffBudget cells (see DiffDefinitionsWithin).
func DiffDefinitions(old, new json.RawMessage) []DefinitionChange {
	budget := DiffBudget
	return DiffDefinitionsWithin(old, new, &budget)
}

// DiffBudget is the work, in cells of the word diffs' quadratic tables,
// that DiffDefinitions spends on one definition: about a tenth of a
// second. The definitions are a server's words, and one whose many
// fields each held 3,000 changed words (each within maxDiffWords) once
// took 15 s of CPU for 1.2 MB, at every listing.
const DiffBudget = 16 << 20

// DiffDefinitionsWithin is DiffDefinitions spending at most *budget cells
// on word diffs, and taking what it spends off *budget: a field whose
// diff would cost more than what is left is shown as one replacement
// ([-old-]{+new+}). One budget shared by many definitions (a server's
// whole list) bounds the work of them all.
func DiffDefinitionsWithin(old, new json.RawMessage, budget *int) []DefinitionChange {
	diff := func(o, n string) string { return wordDiff(o, n, budget) }
	a, b := map[string]leaf{}, map[string]leaf{}
	flatten(decodeJSON(old), "", a)
	flatten(decodeJSON(new), "", b)
	var out []DefinitionChange
	for k, ol := range a {
		nl, ok := b[k]
		ov, nv := ol.text, nl.text
		if ol.str != nl.str {
			// "1" became 1: shown as JSON, or the two read the same.
			ov, nv = ol.json(), nl.json()
		}
		switch {
		case !ok:
			out = append(out, DefinitionChange{Field: k, Old: ol.text, Removed: true, Words: diff(ol.text, "")})
		case nl != ol:
			out = append(out, DefinitionChange{Field: k, Old: ov, New: nv, Words: diff(ov, nv)})
		}
	}
	for k, nl := range b {
		if _, ok := a[k]; !ok {
			out = append(out, DefinitionChange{Field: k, New: nl.text, Added: true, Words: diff("", nl.text)})
		}
	}
	rank := func(f string) int {
		switch {
		case f == "name":
			return 0
		case f == "description":
			return 1
		case f == "title":
			return 2
		case strings.HasPrefix(f, "inputSchema"):
			return 3
		case strings.HasPrefix(f, "annotations"):
			return 4
		}
		return 5
	}
	sort.Slice(out, func(i, j int) bool {
		ri, rj := rank(out[i].Field), rank(out[j].Field)
		if ri != rj {
			return ri < rj
		}
		return out[i].Field < out[j].Field
	})
	return out
}

func decodeJSON(b json.RawMessage) any {
	var v any
	if len(b) > 0 && json.Unmarshal(b, &v) == nil {
		return v
	}
	return nil
}

// leaf is one leaf of a definition: a string as it is (str), anything
// else as its JSON.
type leaf struct {
	text string
	str  bool
}

// json is the leaf as JSON: a string quoted.
func (l leaf) json() string {
	if !l.str {
		return l.text
	}
	return encodeJSON(l.text)
}

func encodeJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(buf.String(), "\n")
}

// flatten records every leaf of v under its dotted path. An array of
// scalars is one leaf (its JSON): "required": ["a","b"] reads as one
// field. Keys that hold a dot or bracket are quoted.
func flatten(v any, path string, out map[string]leaf) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			flatten(e, joinPath(path, k), out)
		}
		if len(x) == 0 && path != "" {
			out[path] = leaf{text: "{}"}
		}
		return
	case []any:
		scalars := true
		for _, e := range x {
			switch e.(type) {
			case map[string]any, []any:
				scalars = false
			}
		}
		if !scalars {
			for i, e := range x {
				flatten(e, fmt.Sprintf("%s[%d]", path, i), out)
			}
			return
		}
	case string:
		out[path] = leaf{text: x, str: true}
		return
	case nil:
		if path == "" {
			return
		}
	}
	out[path] = leaf{text: encodeJSON(v)}
}

func joinPath(path, key string) string {
	if strings.ContainsAny(key, ".[]\" ") || key == "" {
		key = fmt.Sprintf("[%q]", key)
		return path + key
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// maxDiffWords bounds the word diff's quadratic table; longer texts are
// shown as one replacement.
const maxDiffWords = 3000

// WordDiff renders the difference of two texts word by word, as `git diff
// --word-diff=plain` does: unchanged words as they are, removed ones as
// [-…-], added ones as {+…+}. Spaces between words are kept as in new;
// texts that differ only in white space are shown as one replacement. A
// marker in the texts themselves is broken with a backslash (`[\-`), so
// that every marker is the diff's.
func WordDiff(old, new string) string {
	budget := maxDiffWords * maxDiffWords
	return wordDiff(old, new, &budget)
}

// wordDiff is WordDiff within a budget of table cells (see
// DiffDefinitionsWithin).
func wordDiff(old, new string, budget *int) string {
	a, b := words(old), words(new)
	cells := (len(a) + 1) * (len(b) + 1)
	if len(a) > maxDiffWords || len(b) > maxDiffWords || cells > *budget {
		return mark("[-", old, "-]") + mark("{+", new, "+}")
	}
	*budget -= cells
	// Longest common subsequence of the words.
	n, m := len(a), len(b)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i].w == b[j].w {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	var del, ins []string
	marked := false
	flush := func() {
		marked = marked || len(del)+len(ins) > 0
		if len(del) > 0 {
			out.WriteString(mark("[-", strings.Join(del, " "), "-]"))
		}
		if len(ins) > 0 {
			out.WriteString(mark("{+", strings.Join(ins, " "), "+}"))
		}
		del, ins = del[:0], ins[:0]
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i].w == b[j].w:
			flush()
			out.WriteString(b[j].sp + unmark(b[j].w))
			i++
			j++
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			if len(del)+len(ins) == 0 {
				out.WriteString(b[j].sp)
			}
			ins = append(ins, b[j].w)
			j++
		default:
			if len(del)+len(ins) == 0 {
				out.WriteString(a[i].sp)
			}
			del = append(del, a[i].w)
			i++
		}
	}
	flush()
	if !marked && old != new {
		// Only white space changed, which moves no word: shown whole,
		// or it reads as the old text.
		return mark("[-", old, "-]") + mark("{+", new, "+}")
	}
	return out.String()
}

func mark(open, s, close string) string {
	if s == "" {
		return ""
	}
	return open + unmark(s) + close
}

// unmark writes a backslash inside each "[-", "-]", "{+" and "+}" of s,
// the server's text: every marker of a word diff is the diff's own, so a
// description cannot show an instruction it adds as one it removes.
func unmark(s string) string {
	if !strings.ContainsAny(s, "-+") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteByte(s[i])
		if i+1 < len(s) {
			switch s[i : i+2] {
			case "[-", "-]", "{+", "+}":
				b.WriteByte('\\')
			}
		}
	}
	return b.String()
}

// word is one word of a text and the white space before it.
type word struct{ sp, w string }

func words(s string) []word {
	var out []word
	for s != "" {
		i := 0
		for i < len(s) && isSpaceByte(s[i]) {
			i++
		}
		j := i
		for j < len(s) && !isSpaceByte(s[j]) {
			j++
		}
		if j == i {
			break
		}
		out = append(out, word{sp: s[:i], w: s[i:j]})
		s = s[j:]
	}
	return out
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
