package config

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/tailscale/hujson"
)

// jsoncDoc is one parsed JSONC document. Values alias data.
type jsoncDoc struct {
	file string
	data []byte
	obj  *hujson.Object // nil when the document is empty, broken or not an object

	// lineStarts and the last position computed at an ASCII byte make
	// pos cheap for the mostly increasing offsets a parse asks about, so
	// a large one-line (minified) file does not cost quadratic time.
	lineStarts        []int
	lastOff, lastLine int // lastLine 0: nothing cached
	lastCol           int
}

// fixSyntax is the Fix of every parse error.
const fixSyntax = "correct the JSON at that position (// and /* */ comments and trailing commas are allowed)"

// bom is the UTF-8 byte order mark some Windows editors begin a file with.
var bom = []byte{0xEF, 0xBB, 0xBF}

// StripBOM returns data without a leading UTF-8 byte order mark, and the
// mark itself (nil when there is none): JSON forbids it, Notepad writes it,
// and a file read or edited keeps it.
func StripBOM(data []byte) (rest, mark []byte) {
	if bytes.HasPrefix(data, bom) {
		return data[len(bom):], data[:len(bom)]
	}
	return data, nil
}

// parseJSONC parses data as JSONC whose top level must be an object. An
// empty (all-whitespace) document is an empty object. Problems come back as
// one error diagnostic; the returned document is never nil.
func parseJSONC(file string, data []byte) (*jsoncDoc, []Diagnostic) {
	doc := &jsoncDoc{file: file, data: data}
	if len(bytes.TrimSpace(data)) == 0 {
		doc.obj = &hujson.Object{}
		return doc, nil
	}
	if d, ok := utf16Diagnostic(file, data); ok {
		return doc, []Diagnostic{d}
	}
	if off := tooDeep(data); off >= 0 {
		// The parser recurses per level: refuse before it can exhaust
		// the stack on a hostile file.
		return doc, []Diagnostic{tooDeepDiagnostic(doc.pos(off))}
	}
	// hujson rejects a // comment that ends the input without a newline;
	// a newline after the end changes no offset inside data.
	buf := make([]byte, len(data)+1)
	copy(buf, data)
	buf[len(data)] = '\n'
	if _, mark := StripBOM(buf); mark != nil {
		copy(buf, "   ") // white space of the same length: offsets stay
	}
	v, err := hujson.Parse(buf)
	if err != nil {
		off, msg := parseErrorOffset(buf, err)
		d := Diagnostic{
			Severity: SeverityError,
			Position: doc.pos(off),
			Message:  "invalid JSON: " + msg,
			Fix:      fixSyntax,
		}
		if onlyComments(buf) {
			d.Message = "the file holds only comments, no JSON object"
			d.Fix = `write { "mcpServers": { … } } below them`
		}
		return doc, []Diagnostic{d}
	}
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		return doc, []Diagnostic{{
			Severity: SeverityError,
			Position: doc.pos(v.StartOffset),
			Message:  "the top level must be a JSON object, not " + kindName(&v),
			Fix:      `wrap the content in { "mcpServers": { … } }`,
		}}
	}
	doc.obj = obj
	return doc, nil
}

// onlyComments reports whether data holds comments and white space and
// nothing else: a note left for later, every server commented out.
func onlyComments(data []byte) bool {
	if !hasComment(data) {
		return false
	}
	v, err := hujson.Parse(append(append([]byte(nil), data...), "\n{}"...))
	if err != nil {
		return false
	}
	obj, ok := v.Value.(*hujson.Object)
	return ok && len(obj.Members) == 0 && v.StartOffset == len(data)+1
}

// maxDepth bounds the nesting of arrays and objects in a document.
const maxDepth = 500

// CheckNesting returns a [Diagnostic] at file:line:col when the JSONC
// document data nests arrays and objects more than 500 levels deep, and
// nil otherwise. The JSONC parser recurses once per level, so a hostile
// file nested millions deep (a repository's .mcp.json) would exhaust the
// stack and end the process: every read of a configuration file checks
// this first, and so must code that parses such a file itself.
func CheckNesting(file string, data []byte) error {
	if off := tooDeep(data); off >= 0 {
		return tooDeepDiagnostic(posAt(file, data, off))
	}
	return nil
}

// utf16Diagnostic reports a file saved as UTF-16 (Notepad's "Unicode"),
// with or without its byte order mark: the parser would call its first
// byte a stray character. A UTF-8 JSON document has no NUL among its
// first two bytes.
func utf16Diagnostic(file string, data []byte) (Diagnostic, bool) {
	if len(data) < 2 {
		return Diagnostic{}, false
	}
	mark := (data[0] == 0xFF && data[1] == 0xFE) || (data[0] == 0xFE && data[1] == 0xFF)
	if !mark && (data[0] == 0) == (data[1] == 0) {
		return Diagnostic{}, false
	}
	return Diagnostic{
		Severity: SeverityError,
		Position: Position{File: file, Line: 1, Col: 1},
		Message:  "the file is encoded as UTF-16 (Notepad's \"Unicode\"), not UTF-8",
		Fix:      "save it again as UTF-8 (in Notepad: Save As, Encoding UTF-8)",
	}, true
}

func tooDeepDiagnostic(pos Position) Diagnostic {
	return Diagnostic{
		Severity: SeverityError,
		Position: pos,
		Message:  fmt.Sprintf("invalid JSON: nested more than %d levels deep", maxDepth),
		Fix:      "flatten the document: a configuration needs only a few levels",
	}
}

// tooDeep returns the offset of the first '[' or '{' nested deeper than
// maxDepth, skipping strings and comments, or -1.
func tooDeep(data []byte) int {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case '/':
			switch {
			case i+1 < len(data) && data[i+1] == '/':
				for i < len(data) && data[i] != '\n' {
					i++
				}
			case i+1 < len(data) && data[i+1] == '*':
				end := bytes.Index(data[i+2:], []byte("*/"))
				if end < 0 {
					return -1 // unterminated: the parser reports it
				}
				i += 2 + end + 1
			}
		case '[', '{':
			if depth++; depth > maxDepth {
				return i
			}
		case ']', '}':
			depth--
		}
	}
	return -1
}

// parseErrorOffset recovers the byte offset and the bare message from a
// hujson parse error ("hujson: line L, column C: msg"), whose line and
// column are byte-based.
func parseErrorOffset(data []byte, err error) (int, string) {
	s := err.Error()
	var line, col int
	if _, scanErr := fmt.Sscanf(s, "hujson: line %d, column %d:", &line, &col); scanErr != nil {
		return 0, strings.TrimPrefix(s, "hujson: ")
	}
	msg := strings.TrimPrefix(s, fmt.Sprintf("hujson: line %d, column %d: ", line, col))
	off := 0
	for l := 1; l < line; l++ {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			break
		}
		off += i + 1
	}
	off += col - 1
	return min(max(off, 0), len(data)), msg
}

// LineCol converts a byte offset in data to a 1-based line and column. The
// column counts characters (UTF-8 runes; each invalid byte counts as one),
// which is what editors show. An offset outside data is clamped to it.
func LineCol(data []byte, offset int) (line, col int) {
	offset = min(max(offset, 0), len(data))
	before := data[:offset]
	line = 1 + bytes.Count(before, []byte("\n"))
	start := bytes.LastIndexByte(before, '\n') + 1
	col = 1 + utf8.RuneCount(before[start:])
	return line, col
}

// pos returns the position of a byte offset in the document; it equals
// posAt(d.file, d.data, offset).
func (d *jsoncDoc) pos(offset int) Position {
	data := d.data
	offset = min(max(offset, 0), len(data))
	// Only ASCII bytes are certain to start a character whatever precedes
	// them, so only they can be counted from (and be) a cached position.
	ascii := offset < len(data) && data[offset] < utf8.RuneSelf
	if ascii && d.lastLine > 0 {
		lo, hi := min(offset, d.lastOff), max(offset, d.lastOff)
		if seg := data[lo:hi]; bytes.IndexByte(seg, '\n') < 0 {
			n := utf8.RuneCount(seg)
			if offset < d.lastOff {
				n = -n
			}
			d.lastOff, d.lastCol = offset, d.lastCol+n
			return Position{File: d.file, Line: d.lastLine, Col: d.lastCol}
		}
	}
	if d.lineStarts == nil {
		d.lineStarts = []int{0}
		for i, c := range data {
			if c == '\n' {
				d.lineStarts = append(d.lineStarts, i+1)
			}
		}
	}
	// The last line starting at or before offset.
	line := sort.SearchInts(d.lineStarts, offset+1)
	col := 1 + utf8.RuneCount(data[d.lineStarts[line-1]:offset])
	if ascii {
		d.lastOff, d.lastLine, d.lastCol = offset, line, col
	}
	return Position{File: d.file, Line: line, Col: col}
}

func posAt(file string, data []byte, offset int) Position {
	line, col := LineCol(data, offset)
	return Position{File: file, Line: line, Col: col}
}

// kindName names a JSON value's kind for messages ("a string", "an array").
func kindName(v *hujson.Value) string {
	switch v.Value.Kind() {
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "an unknown value"
}

// memberName returns an object member's (unquoted) name.
func memberName(m *hujson.ObjectMember) string {
	lit, _ := m.Name.Value.(hujson.Literal)
	return lit.String()
}

// lookupMember returns the last member named key (JSON decoders let the
// last duplicate win, and so do we), or nil.
func lookupMember(obj *hujson.Object, key string) *hujson.ObjectMember {
	if obj == nil {
		return nil
	}
	for i := len(obj.Members) - 1; i >= 0; i-- {
		if memberName(&obj.Members[i]) == key {
			return &obj.Members[i]
		}
	}
	return nil
}

// stringValue returns v's string value when v is a JSON string.
func stringValue(v *hujson.Value) (string, bool) {
	lit, ok := v.Value.(hujson.Literal)
	if !ok || lit.Kind() != '"' {
		return "", false
	}
	return lit.String(), true
}

func isNull(v *hujson.Value) bool { return v.Value.Kind() == 'n' }

// nameList reads an array of names (such as "disabledMcpServers") from obj.
// Entries may be strings or, as Claude Code writes allowlists, objects with
// a "serverName" string. present reports whether the key exists at all.
func (d *jsoncDoc) nameList(obj *hujson.Object, key string) (names []string, pos map[string]Position, present bool, diags []Diagnostic) {
	m := lookupMember(obj, key)
	if m == nil || isNull(&m.Value) {
		return nil, nil, false, nil
	}
	arr, ok := m.Value.Value.(*hujson.Array)
	if !ok {
		return nil, nil, true, []Diagnostic{{
			Severity: SeverityError,
			Position: d.pos(m.Value.StartOffset),
			Field:    key,
			Message:  "must be an array of server names, not " + kindName(&m.Value),
			Fix:      fmt.Sprintf(`write "%s": ["name", …]`, key),
		}}
	}
	pos = make(map[string]Position)
	for i := range arr.Elements {
		e := &arr.Elements[i]
		name, ok := stringValue(e)
		if !ok {
			if o, isObj := e.Value.(*hujson.Object); isObj {
				if sm := lookupMember(o, "serverName"); sm != nil {
					name, ok = stringValue(&sm.Value)
				}
			}
		}
		if !ok {
			diags = append(diags, Diagnostic{
				Severity: SeverityError,
				Position: d.pos(e.StartOffset),
				Field:    key,
				Message:  "entries must be server names (strings), not " + kindName(e),
				Fix:      "write the server's name as a string",
			})
			continue
		}
		if _, dup := pos[name]; !dup {
			names = append(names, name)
			pos[name] = d.pos(e.StartOffset)
		}
	}
	return names, pos, true, diags
}
