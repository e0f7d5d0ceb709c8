package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/switchboard-mcp/switchboard/internal/termsafe"
)

// tablePrinter prints rows as aligned columns under an upper-case header on
// a terminal, and as tab-separated rows under the same header, as its own
// first line, when piped: what a person reading `| less` needs to know
// which field is which, and what a script skips with `tail -n +2` (scripts
// that want no header use --json, whose keys are the stable contract).
// Piped rows all have the same number of fields (the header's, or the
// widest row's): a missing cell is an empty field, never a missing tab.
type tablePrinter struct {
	w      io.Writer
	tty    bool
	width  int // terminal width; 0: unknown
	header []string
	rows   [][]string
	// shrink is the column cut down (ending in "…") when a terminal is too
	// narrow for the table; -1: none.
	shrink int
}

// newTablePrinter returns a printer for io.Out; header names the columns.
func newTablePrinter(s *IOStreams, header ...string) *tablePrinter {
	return &tablePrinter{w: s.Out, tty: s.IsTTY, width: s.Width, header: header, shrink: -1}
}

// Shrink names the column to cut when the table is wider than the
// terminal (piped output is never cut).
func (t *tablePrinter) Shrink(col int) { t.shrink = col }

// AddRow adds one row; missing cells are empty. Cells are made safe to
// print (termsafe.Line): much of what tables show — names, descriptions,
// reasons, paths — was written by a repository or a server, and must not
// act on the terminal. A tab or newline inside a cell would break the row:
// it becomes a space.
func (t *tablePrinter) AddRow(cells ...string) {
	row := make([]string, len(cells))
	for i, c := range cells {
		row[i] = termsafe.Line(cellSpaces.Replace(c))
	}
	t.rows = append(t.rows, row)
}

var cellSpaces = strings.NewReplacer("\r\n", " ", "\t", " ", "\n", " ")

// Render writes the table; nothing at all when it has no rows. A list
// with nothing in it prints no header, on a terminal or piped, so that a
// script reads an empty stdout; its command says why on stderr (README,
// "The CLI": one rule for every list command).
func (t *tablePrinter) Render() error {
	if len(t.rows) == 0 {
		return nil
	}
	var b bytes.Buffer
	if !t.tty {
		cols := len(t.header)
		for _, r := range t.rows {
			cols = max(cols, len(r))
		}
		rows := t.rows
		if len(t.header) > 0 {
			h := make([]string, len(t.header))
			for i, c := range t.header {
				h[i] = strings.ToUpper(c)
			}
			rows = append([][]string{h}, rows...)
		}
		for _, r := range rows {
			for i := range cols {
				if i > 0 {
					b.WriteByte('\t')
				}
				if i < len(r) {
					b.WriteString(r[i])
				}
			}
			b.WriteByte('\n')
		}
		_, err := t.w.Write(b.Bytes())
		return err
	}
	rows := t.rows
	if len(t.header) > 0 {
		h := make([]string, len(t.header))
		for i, c := range t.header {
			h[i] = strings.ToUpper(c)
		}
		rows = append([][]string{h}, rows...)
	}
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	if total := tableWidth(widths); t.width > 0 && total > t.width && t.shrink >= 0 && t.shrink < len(widths) {
		const minWidth = 12
		w := max(minWidth, widths[t.shrink]-(total-t.width))
		if w < widths[t.shrink] {
			widths[t.shrink] = w
			for _, r := range rows {
				if t.shrink < len(r) {
					r[t.shrink] = truncate(r[t.shrink], w)
				}
			}
		}
	}
	for _, r := range rows {
		for i, c := range r {
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+2))
			}
		}
		// Trailing blanks of empty last cells are noise.
		trimmed := bytes.TrimRight(b.Bytes(), " ")
		b.Truncate(len(trimmed))
		b.WriteByte('\n')
	}
	_, err := t.w.Write(b.Bytes())
	return err
}

func tableWidth(widths []int) int {
	total := 0
	for _, w := range widths {
		total += w + 2
	}
	return total - 2
}

// truncate cuts s to n runes, the last being "…".
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// printJSON writes v as indented JSON followed by a newline: the one JSON
// exporter every --json output goes through. Keys come out in struct field
// order (maps sorted), and <, > and & are not escaped.
//
// encoding/json escapes C0 controls but writes C1 controls, DEL and bidi
// or invisible format characters as they are; those are written as \u
// escapes too (escapeJSON), so --json on a terminal cannot act on it
// either. The JSON means exactly the same.
func printJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encoding JSON: %w", err)
	}
	_, err := w.Write(escapeJSON(b.Bytes()))
	return err
}

// escapeJSON rewrites every character of encoded JSON that termsafe calls
// unsafe as a \u escape (a surrogate pair above U+FFFF). Outside strings
// JSON is printable ASCII, so only string contents change, and they decode
// to the same text. encoding/json has already made the text valid UTF-8.
func escapeJSON(b []byte) []byte {
	// RuneError: a json.RawMessage is copied as it is, invalid UTF-8
	// included; it comes out as U+FFFD.
	unsafe := func(r rune) bool { return r >= 0x7f && (r == utf8.RuneError || termsafe.Unsafe(r)) }
	i := bytes.IndexFunc(b, unsafe)
	if i < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:i]...)
	for _, r := range string(b[i:]) {
		if !unsafe(r) || r == utf8.RuneError {
			out = utf8.AppendRune(out, r)
			continue
		}
		if r > 0xffff {
			r1, r2 := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
			continue
		}
		out = fmt.Appendf(out, `\u%04x`, r)
	}
	return out
}
