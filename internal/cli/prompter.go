package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/net/idna"
	"golang.org/x/term"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/redact"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
)

// Elicitation actions (MCP elicitation/create results).
const (
	elicitAccept  = "accept"
	elicitDecline = "decline"
	elicitCancel  = "cancel"
)

// prompter returns the session's answer to elicitation requests: a person
// at the terminal when there is one, else a polite decline noted on stderr.
func (s *session) prompter() host.Prompter {
	if s.opts.IO.CanPrompt {
		p := &termPrompter{in: s.input(), out: s.opts.IO.ErrOut, line: s.line, width: s.opts.IO.Width}
		p.tty, _ = s.opts.IO.In.(*os.File)
		if f, ok := s.opts.IO.ErrOut.(*os.File); ok {
			if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
				p.width = w
			}
		}
		return p
	}
	return &headlessPrompter{w: s.opts.IO.ErrOut, line: s.line}
}

// input returns the one buffered reader of IO.In that every question of the
// session reads from (two readers would steal each other's lines).
func (s *session) input() *lineReader {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.in == nil {
		s.in = newLineReader(s.opts.IO.In)
	}
	return s.in
}

// headlessPrompter declines every request and says so, since nobody can
// answer (elicitation is declined when headless).
type headlessPrompter struct {
	w    io.Writer
	line *liveLine
}

func (p *headlessPrompter) Elicit(ctx context.Context, server string, params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	release := p.line.Hold()
	msg := ""
	if params != nil {
		msg = oneLineText(params.Message)
	}
	fmt.Fprintf(p.w, "notice: declined a request for input from server %q (no terminal to ask): %s\n", server, msg)
	release()
	return host.Decliner{}.Elicit(ctx, server, params)
}

// QuestionRefused says on the terminal that Switchboard declined a
// server's question without showing it (host.QuestionRefusalNoter).
func (p *headlessPrompter) QuestionRefused(_ context.Context, server, why string) {
	noteRefusedQuestion(p.w, p.line, server, why)
}

// QuestionRefused says that Switchboard declined a server's question
// without asking it (host.QuestionRefusalNoter).
func (p *termPrompter) QuestionRefused(_ context.Context, server, why string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	noteRefusedQuestion(p.out, p.line, server, why)
}

func noteRefusedQuestion(w io.Writer, line *liveLine, server, why string) {
	release := line.Hold()
	defer release()
	fmt.Fprintf(w, "notice: Switchboard declined a question from server %q without asking you: %s\n", termsafe.Line(server), oneLineText(why))
}

// termPrompter asks the person at the terminal: it shows the server's
// message, lets them accept, decline or cancel, and asks for each field
// of the requested schema. Questions go to stderr; stdout stays data.
//
// Everything the form says is the server's: every line of it is marked
// with the server's name (serverMark) and escaped, so that no line can
// pass for one of Switchboard's own — an approval review, a question of
// its own — nor redraw the question below it. What is typed into a field
// that asks for a secret is not echoed.
type termPrompter struct {
	in   *lineReader
	out  io.Writer
	line *liveLine
	// tty is the terminal the answers are typed on (nil: not a file), for
	// turning its echo off; width is out's width in columns (0: unknown).
	tty   *os.File
	width int
	mu    sync.Mutex // one request at a time
}

// serverMark begins every line of a server's words in a form: its name
// and a bar that begins no line of Switchboard's own.
func serverMark(server string) string { return termsafe.Line(server) + " │ " }

// defaultWidth is assumed for a terminal of unknown width.
const defaultWidth = 80

// writeServerText writes text, a server's, as lines that each begin with
// indent and the server's mark. A line wider than the terminal is broken
// at spaces into several, each marked: a terminal that wrapped it would
// begin a row with the server's words unmarked (spaces can pad a line to
// the edge). A single word wider than the terminal is left whole — the
// rest of it, where the terminal wraps it, holds no space, so it cannot
// pass for a sentence of Switchboard's — and so is a URL one can copy.
func (p *termPrompter) writeServerText(indent, server, text string) {
	mark := indent + serverMark(server)
	room := p.width
	if room <= 0 {
		room = defaultWidth
	}
	room = max(room-columns(mark)-1, 20)
	text = strings.TrimRight(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for _, line := range strings.Split(text, "\n") {
		for _, part := range wrapWords(termsafe.Text(line), room) {
			fmt.Fprintf(p.out, "%s%s\n", mark, part)
		}
	}
}

// columns is at most how many terminal columns s takes: a wide
// (East Asian, emoji) character may take two, so every character from
// U+1100 on counts for two.
func columns(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x1100 {
			n++
		}
	}
	return n
}

// wrapWords breaks s at single spaces into lines of at most n columns
// (see columns); a word wider than n is a line of its own. Runs of spaces
// are kept but for the one a line breaks at.
func wrapWords(s string, n int) []string {
	if columns(s) <= n {
		return []string{s}
	}
	var lines []string
	cur, w := "", -1 // w: the columns of cur, -1 while it has no word
	for _, word := range strings.Split(s, " ") {
		c := columns(word)
		if w >= 0 && w+1+c > n {
			lines = append(lines, cur)
			cur, w = "", -1
		}
		if w < 0 {
			cur, w = word, c
			continue
		}
		cur, w = cur+" "+word, w+1+c
	}
	return append(lines, cur)
}

// errEOF ends a prompt when the input closes: the answer is cancel.
var errEOF = errors.New("input closed")

func (p *termPrompter) Elicit(ctx context.Context, server string, params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	release := p.line.Hold()
	defer release()
	if params == nil {
		params = &mcp.ElicitParams{}
	}
	// The message and URL are the server's: marked as its words line by
	// line, and escaped, so that they cannot redraw the question below or
	// disguise the link.
	fmt.Fprintf(p.out, "\nServer %q asks (its own words follow, each line marked %q):\n", server, strings.TrimSpace(serverMark(server)))
	p.writeServerText("  ", server, strings.TrimSpace(params.Message))
	if params.Mode == "url" || (params.URL != "" && params.RequestedSchema == nil) {
		fmt.Fprintln(p.out, "  It wants you to open this address:")
		p.writeServerText("  ", server, termsafe.Line(params.URL))
		if host, lookalike := urlHost(params.URL); host != "" {
			fmt.Fprintf(p.out, "  The address is on the host %s.\n", termsafe.Line(host))
			if lookalike {
				fmt.Fprintln(p.out, "  Careful: that host name is spelled with characters other than plain ASCII letters (punycode xn--), and may imitate another.")
			}
		}
	}
	choice, err := p.ask(ctx, "Answer it? [y]es, [n]o (decline), [c]ancel: ", func(s string) (any, error) {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "", "y", "yes", "a", "accept":
			return elicitAccept, nil
		case "n", "no", "d", "decline":
			return elicitDecline, nil
		case "c", "cancel":
			return elicitCancel, nil
		}
		return nil, errors.New("type y, n or c")
	})
	if err != nil {
		return p.ended(err)
	}
	if choice != elicitAccept {
		return &mcp.ElicitResult{Action: choice.(string)}, nil
	}
	fields, err := schemaFields(params.RequestedSchema)
	if err != nil {
		fmt.Fprintf(p.out, "  The request's form cannot be shown (%s); declining.\n", termsafe.Line(err.Error()))
		return &mcp.ElicitResult{Action: elicitDecline}, nil
	}
	content := map[string]any{}
	for _, f := range fields {
		v, err := p.askField(ctx, server, f)
		if err != nil {
			return p.ended(err)
		}
		if v != nil {
			content[f.Name] = v
		}
	}
	return &mcp.ElicitResult{Action: elicitAccept, Content: content}, nil
}

// ended turns a prompt that could not finish (input closed, ctx done)
// into a cancel.
func (p *termPrompter) ended(err error) (*mcp.ElicitResult, error) {
	if errors.Is(err, errEOF) {
		fmt.Fprintln(p.out, "\n  (input closed: cancelled)")
		return &mcp.ElicitResult{Action: elicitCancel}, nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &mcp.ElicitResult{Action: elicitCancel}, nil
	}
	return nil, err
}

// ask shows question until parse accepts the answer.
func (p *termPrompter) ask(ctx context.Context, question string, parse func(string) (any, error)) (any, error) {
	return askLoop(ctx, p.in, p.out, question, parse)
}

func askLoop(ctx context.Context, in *lineReader, out io.Writer, question string, parse func(string) (any, error)) (any, error) {
	for {
		fmt.Fprint(out, termsafe.Line(question))
		s, err := in.ReadLine(ctx)
		if err != nil {
			return nil, err
		}
		v, perr := parse(s)
		if perr == nil {
			return v, nil
		}
		fmt.Fprintf(out, "  %s\n", termsafe.Line(perr.Error()))
	}
}

// schemaField is one property of an elicitation form: MCP allows only
// flat objects of strings, numbers, integers, booleans and enums.
type schemaField struct {
	Name        string
	Title       string
	Description string
	Type        string
	Enum        []string
	EnumNames   []string
	Format      string
	Default     any
	Required    bool
}

// schemaFields reads the requested schema's properties in the order the
// server wrote them.
func schemaFields(schema any) ([]schemaField, error) {
	if schema == nil {
		return nil, nil
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	var top struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("schema is not an object: %w", err)
	}
	if len(top.Properties) == 0 || string(top.Properties) == "null" {
		return nil, nil
	}
	order, err := objectKeys(top.Properties)
	if err != nil {
		return nil, err
	}
	var props map[string]struct {
		Type        any      `json:"type"`
		Title       string   `json:"title"`
		Description string   `json:"description"`
		Enum        []any    `json:"enum"`
		EnumNames   []string `json:"enumNames"`
		OneOf       []struct {
			Const any    `json:"const"`
			Title string `json:"title"`
		} `json:"oneOf"`
		Format  string `json:"format"`
		Default any    `json:"default"`
	}
	if err := json.Unmarshal(top.Properties, &props); err != nil {
		return nil, fmt.Errorf("properties: %w", err)
	}
	required := map[string]bool{}
	for _, r := range top.Required {
		required[r] = true
	}
	var out []schemaField
	for _, name := range order {
		p := props[name]
		f := schemaField{Name: name, Title: p.Title, Description: p.Description, Format: p.Format,
			Default: p.Default, Required: required[name], EnumNames: p.EnumNames}
		switch t := p.Type.(type) {
		case string:
			f.Type = t
		case []any: // ["string","null"]
			for _, x := range t {
				if s, ok := x.(string); ok && s != "null" {
					f.Type = s
					break
				}
			}
		}
		for _, e := range p.Enum {
			f.Enum = append(f.Enum, fmt.Sprint(e))
		}
		if len(f.Enum) == 0 {
			for _, o := range p.OneOf {
				f.Enum = append(f.Enum, fmt.Sprint(o.Const))
				f.EnumNames = append(f.EnumNames, o.Title)
			}
		}
		if f.Type == "" {
			f.Type = "string"
		}
		out = append(out, f)
	}
	return out, nil
}

// objectKeys returns the keys of a JSON object in document order.
func objectKeys(raw json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("properties is not an object")
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		keys = append(keys, k)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// askField asks for one field and returns its typed value, or nil for an
// optional field left empty. The field's title, description and choices
// are the server's words, marked as such; the question is Switchboard's.
func (p *termPrompter) askField(ctx context.Context, server string, f schemaField) (any, error) {
	label := f.Title
	if label == "" {
		label = f.Name
	}
	p.writeServerText("  ", server, label)
	if f.Description != "" {
		p.writeServerText("    ", server, f.Description)
	}
	if len(f.Enum) > 0 {
		for i, e := range f.Enum {
			name := e
			if i < len(f.EnumNames) && f.EnumNames[i] != "" && f.EnumNames[i] != e {
				name = fmt.Sprintf("%s (%s)", f.EnumNames[i], e)
			}
			p.writeServerText(fmt.Sprintf("    %d) ", i+1), server, termsafe.Line(name))
		}
	}
	secret := secretField(f)
	q := "  answer"
	switch {
	case len(f.Enum) > 0:
		q += fmt.Sprintf(" [1-%d]", len(f.Enum))
	case f.Type == "boolean":
		q += " [y/n]"
	case f.Type == "number" || f.Type == "integer":
		q += " (" + f.Type + ")"
	case f.Format != "":
		q += " (" + f.Format + ")"
	}
	if f.Default != nil {
		q += fmt.Sprintf(" (default %v)", f.Default)
	}
	if !f.Required {
		q += " (optional)"
	}
	if secret {
		restore, hidden := func() {}, false
		if p.tty != nil {
			restore, hidden = withoutEcho(p.tty)
		}
		defer restore()
		if hidden {
			q += " (a secret: not shown as you type)"
			defer fmt.Fprintln(p.out) // the Enter was not echoed either
		} else {
			q += " (a secret, but this input cannot hide it)"
		}
	}
	q += ": "
	return p.ask(ctx, q, func(s string) (any, error) {
		s = strings.TrimSpace(s)
		if s == "" {
			switch {
			case f.Default != nil:
				return f.Default, nil
			case !f.Required:
				return nil, nil
			}
			return nil, errors.New("an answer is required")
		}
		return parseFieldValue(f, s)
	})
}

// secretField reports whether a field asks for a secret, whose answer is
// not echoed: a password-like format, or a name or title that names a
// secret (token, password, key, …; redact.IsSecretKey), passphrases and
// one-time codes included. Choices and yes/no answers are never secret.
func secretField(f schemaField) bool {
	if len(f.Enum) > 0 || f.Type == "boolean" {
		return false
	}
	switch strings.ToLower(f.Format) {
	case "password", "secret", "token", "api-key", "apikey":
		return true
	}
	for _, s := range []string{f.Name, f.Title} {
		if redact.IsSecretKey(s) || secretWords().MatchString(s) {
			return true
		}
	}
	return false
}

// secretWords are secrets' names redact.IsSecretKey does not know.
var secretWords = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)passphrase|\bpin\b|\botp\b|one[- ]time|2fa|mfa|\bpat\b`)
})

// parseFieldValue converts what was typed into the field's JSON type.
func parseFieldValue(f schemaField, s string) (any, error) {
	if len(f.Enum) > 0 {
		if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(f.Enum) {
			return f.Enum[n-1], nil
		}
		for i, e := range f.Enum {
			if strings.EqualFold(s, e) || (i < len(f.EnumNames) && strings.EqualFold(s, f.EnumNames[i])) {
				return e, nil
			}
		}
		return nil, fmt.Errorf("choose a number from 1 to %d", len(f.Enum))
	}
	switch f.Type {
	case "boolean":
		switch strings.ToLower(s) {
		case "y", "yes", "true", "1":
			return true, nil
		case "n", "no", "false", "0":
			return false, nil
		}
		return nil, errors.New("type y or n")
	case "integer":
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, errors.New("type a whole number")
		}
		return n, nil
	case "number":
		n, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, errors.New("type a number")
		}
		return n, nil
	}
	return s, nil
}

// lineReader reads lines from a reader that may block (a terminal) without
// holding up a cancelled context: one reading goroutine feeds a channel.
type lineReader struct {
	once  sync.Once
	r     *bufio.Reader
	lines chan lineResult
	mu    sync.Mutex
}

type lineResult struct {
	s   string
	err error
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReader(r), lines: make(chan lineResult)}
}

// ReadLine returns the next line without its newline; errEOF when the
// input is closed with nothing left.
func (l *lineReader) ReadLine(ctx context.Context) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.once.Do(func() {
		go func() {
			for {
				s, err := l.r.ReadString('\n')
				if err != nil && s == "" {
					l.lines <- lineResult{err: errEOF}
					close(l.lines)
					return
				}
				l.lines <- lineResult{s: strings.TrimRight(s, "\r\n")}
			}
		}()
	})
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case r, ok := <-l.lines:
		if !ok {
			return "", errEOF
		}
		return r.s, r.err
	}
}

// urlHost is the host of a question's address as the browser will reach
// it (international names in their ASCII form, xn--…), and whether it is
// such a name, which can imitate another (раypal.com); "" when there is
// none.
func urlHost(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return "", false
	}
	h := u.Hostname()
	ascii, err := idna.Lookup.ToASCII(h)
	if err != nil {
		ascii = h
	}
	lookalike := ascii != h
	for _, label := range strings.Split(strings.ToLower(ascii), ".") {
		if strings.HasPrefix(label, "xn--") {
			lookalike = true
		}
	}
	return ascii, lookalike
}

// oneLineText is s on one line, for messages from servers.
func oneLineText(s string) string {
	return termsafe.Line(strings.Join(strings.Fields(s), " "))
}
