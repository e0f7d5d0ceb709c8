package toolsurface

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxOutputTokens is the result size, in estimated tokens
// (EstimateTokens), above which Present spills or truncates.
const DefaultMaxOutputTokens = 20000

// The environment variables OutputOptionsFromEnv reads.
const (
	EnvMaxOutputTokens    = "MAX_MCP_OUTPUT_TOKENS"
	EnvDisableOutputFiles = "SWITCHBOARD_DISABLE_MCP_LARGE_OUTPUT_FILES"
)

// ToolResultsDir is the folder under the state directory that spill files
// go to: ToolResultsDir/<workspace>/<session>/ (see Present).
const ToolResultsDir = "tool-results"

// DefaultSpillRetention is how long spill files are kept when
// OutputOptions.Retention is not set: a session's folder whose last file
// was written longer ago than this is removed the next time a result is
// spilled.
const DefaultSpillRetention = 7 * 24 * time.Hour

// NoWorkspace names the spill folder of a session without a workspace.
const NoWorkspace = "no-workspace"

// processSession is the session of OutputOptions that name none: one per
// process, "<UTC start time>-<random>", so that a CLI command, a gateway
// or an embedder's run keeps its spill files together.
var processSession = sync.OnceValue(func() string { return NewSession(time.Now(), rand.Reader) })

// NewSession returns a new session name for OutputOptions.Session:
// "<UTC time>-<8 hex digits from r>", e.g. "20261204T140502Z-3fa2c41b".
func NewSession(now time.Time, r io.Reader) string {
	var buf [4]byte
	_, _ = io.ReadFull(r, buf[:]) // a short read still names a folder
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(buf[:])
}

// OutputOptions configure Present. The zero value (or nil) means: a limit
// of DefaultMaxOutputTokens and no state directory, so a large result is
// truncated, never written.
type OutputOptions struct {
	// MaxTokens is the limit. If <= 0, DefaultMaxOutputTokens.
	MaxTokens int
	// StateDir is the Switchboard state directory (e.g. ~/.switchboard);
	// spill files go to StateDir/tool-results/<workspace>/<session>. If
	// empty, large results are truncated.
	StateDir string
	// Workspace is the workspace root the results belong to; its folder
	// is "<base name>-<8 hex digits of sha256 of the path>". If empty,
	// NoWorkspace.
	Workspace string
	// Session names the session's folder (see NewSession). If empty, one
	// session per process.
	Session string
	// Retention is how long a session's spill files are kept after its
	// last one was written. If <= 0, DefaultSpillRetention.
	Retention time.Duration
	// DisableFiles truncates large results instead of writing them.
	DisableFiles bool
	// Now stamps spill file names. If nil, time.Now.
	Now func() time.Time
	// Rand supplies the random part of spill file names. If nil,
	// crypto/rand.
	Rand io.Reader
	// WriteFile writes a spill file. If nil, WriteSpillFile. A test or an
	// embedder with its own storage can replace it.
	WriteFile func(path string, data []byte) error
}

// OutputOptionsFromEnv returns OutputOptions for stateDir with the limit
// from MAX_MCP_OUTPUT_TOKENS and the switch
// SWITCHBOARD_DISABLE_MCP_LARGE_OUTPUT_FILES read through getenv (pass
// os.Getenv). A bad value is reported in err (one line naming the
// variable) and the safe choice is made: the default limit, and files
// disabled for a switch that is set but not 0/1/true/false.
func OutputOptionsFromEnv(getenv func(string) string, stateDir string) (OutputOptions, error) {
	opts := OutputOptions{StateDir: stateDir}
	var errs []error
	if v := strings.TrimSpace(getenv(EnvMaxOutputTokens)); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			errs = append(errs, fmt.Errorf("%s=%s is not a positive whole number of tokens; using %d", EnvMaxOutputTokens, quote(v), DefaultMaxOutputTokens))
		} else {
			opts.MaxTokens = n
		}
	}
	if v := strings.TrimSpace(getenv(EnvDisableOutputFiles)); v != "" {
		switch strings.ToLower(v) {
		case "1", "true", "yes", "on":
			opts.DisableFiles = true
		case "0", "false", "no", "off":
		default:
			opts.DisableFiles = true
			errs = append(errs, fmt.Errorf("%s=%s is not 1 or 0; large output files are disabled", EnvDisableOutputFiles, quote(v)))
		}
	}
	return opts, errors.Join(errs...)
}

// WriteSpillFile is the default OutputOptions.WriteFile: it creates the
// file's folder (mode 0700) if needed and writes data to a new file of
// mode 0600, refusing to overwrite one that exists.
func WriteSpillFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return err
	}
	return nil
}

// Fallback says why Present truncated a large result instead of writing it
// to a file.
type Fallback string

// The situations in which a large result is truncated instead of spilled to
// a file (docs/configuration.md, Large tool output and provider shapes).
const (
	FallbackNone       Fallback = ""
	FallbackMedia      Fallback = "the result holds images or audio"
	FallbackNoStateDir Fallback = "there is no state directory"
	FallbackDisabled   Fallback = EnvDisableOutputFiles + " is set"
	FallbackWriteError Fallback = "the file could not be written"
)

// Output is what Present decided.
type Output struct {
	// Text is the enveloped text a model gets (Wrap's guarantees hold).
	Text string
	// Tokens is the estimated size of the whole result: its rendered text
	// plus, for images and audio, their base64 size, at 4 bytes a token.
	Tokens int
	// SpillPath is the file holding the full rendered result, or "".
	SpillPath string
	// Truncated reports that Text holds a truncated result.
	Truncated bool
	// Fallback says why a large result was truncated, not spilled.
	Fallback Fallback
	// WriteErr is the error writing the spill file failed with, when
	// Fallback is FallbackWriteError. It may name paths; it is for logs.
	WriteErr error
}

// Present renders a tool result the way a model gets it
// (docs/configuration.md, Large tool output and provider shapes):
//
//   - A result of at most MaxTokens estimated tokens is Envelope(server,
//     tool, res), unchanged.
//   - A larger one, if it holds no image or audio, there is a StateDir,
//     files are not disabled and the write succeeds, is written whole (as
//     RenderContent renders it) to StateDir/tool-results/<workspace>/
//     <session>/mcp-<server>-<tool>-<timestamp>-<rand>.txt, and the model
//     gets a guide in the envelope: the path, the size in bytes, lines and
//     tokens, how to read it in pages that each fit the limit, and a short
//     preview. Before it writes, Present removes the session folders (of
//     every workspace) whose files are older than Retention, and spill
//     files of older versions lying directly in tool-results.
//   - Otherwise the result is truncated to MaxTokens×4 bytes of rendered
//     text (never splitting a character), followed by
//     "[OUTPUT TRUNCATED - exceeded N token limit]" and one note per kind
//     of block left out, e.g. "[Dropped 2 audio blocks due to size
//     limit]". Blocks are kept in order while they fit; an image or audio
//     block costs its base64 size, so a 20 MB image is dropped while the
//     text beside it is kept, and base64 never reaches the text.
//
// The text is defanged before it is cut, so the cut payload is at most
// MaxTokens×4 bytes plus the notes. The only I/O is opts.WriteFile and the
// removal of expired spill folders. Present is safe for concurrent use.
func Present(server, tool string, res *mcp.CallToolResult, opts *OutputOptions) Output {
	var o OutputOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxTokens <= 0 {
		o.MaxTokens = DefaultMaxOutputTokens
	}
	isError := res != nil && res.IsError
	parts := renderParts(res)
	size, media := 0, false
	for i, p := range parts {
		if i > 0 {
			size++ // the newline joining parts
		}
		size += len(p.text)
		if p.kind == "image" || p.kind == "audio" {
			media = true
			size += p.cost
		}
	}
	out := Output{Tokens: (size + 3) / 4}
	if out.Tokens <= o.MaxTokens {
		out.Text = Wrap(server, tool, isError, joinParts(parts))
		return out
	}

	switch {
	case media:
		out.Fallback = FallbackMedia
	case o.DisableFiles:
		out.Fallback = FallbackDisabled
	case o.StateDir == "":
		out.Fallback = FallbackNoStateDir
	default:
		full := joinParts(parts)
		path, err := spillPath(o, server, tool)
		if err == nil {
			removeExpiredSpills(o, filepath.Dir(path))
		}
		if err == nil {
			write := o.WriteFile
			if write == nil {
				write = WriteSpillFile
			}
			err = write(path, []byte(full))
		}
		if err == nil {
			out.SpillPath = path
			out.Text = Wrap(server, tool, isError, guide(path, full, o.MaxTokens))
			return out
		}
		out.Fallback = FallbackWriteError
		out.WriteErr = err
	}
	out.Truncated = true
	out.Text = Wrap(server, tool, isError, truncate(parts, o.MaxTokens))
	return out
}

// part is one rendered block of a result. cost is what an image or audio
// block weighs in a model's context: its base64 size.
type part struct {
	kind string
	text string
	cost int
}

// renderParts renders res block by block exactly as RenderContent does
// (joinParts(renderParts(r)) == RenderContent(r)).
func renderParts(res *mcp.CallToolResult) []part {
	if res == nil {
		return []part{{kind: "text", text: emptyResult}}
	}
	var parts []part
	hasText := false
	for _, c := range res.Content {
		switch c := c.(type) {
		case nil:
		case *mcp.TextContent:
			if c != nil {
				hasText = true
				parts = append(parts, part{kind: "text", text: c.Text})
			}
		case *mcp.ImageContent:
			if c != nil {
				parts = append(parts, part{kind: "image", text: mediaLine("image", c.MIMEType, len(c.Data)),
					cost: base64.StdEncoding.EncodedLen(len(c.Data))})
			}
		case *mcp.AudioContent:
			if c != nil {
				parts = append(parts, part{kind: "audio", text: mediaLine("audio", c.MIMEType, len(c.Data)),
					cost: base64.StdEncoding.EncodedLen(len(c.Data))})
			}
		case *mcp.ResourceLink:
			if c != nil {
				parts = append(parts, part{kind: "resource link", text: linkLine(c)})
			}
		case *mcp.EmbeddedResource:
			if c != nil {
				parts = append(parts, part{kind: "resource", text: embedded(c.Resource)})
			}
		default:
			parts = append(parts, part{kind: "unsupported", text: "[unsupported content: " + contentType(c) + "]"})
		}
	}
	if !hasText && res.StructuredContent != nil {
		parts = append(parts, part{kind: "structured content", text: structured(res.StructuredContent)})
	}
	if len(parts) == 0 {
		return []part{{kind: "text", text: emptyResult}}
	}
	return parts
}

func joinParts(parts []part) string {
	n := 0
	for _, p := range parts {
		n += len(p.text) + 1
	}
	var b strings.Builder
	b.Grow(n)
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.text)
	}
	return b.String()
}

// TruncationMarker is the line that ends a truncated result.
func TruncationMarker(maxTokens int) string {
	return fmt.Sprintf("[OUTPUT TRUNCATED - exceeded %d token limit]", maxTokens)
}

// truncate keeps parts in order within maxTokens×4 bytes of defanged text
// and notes what it left out.
func truncate(parts []part, maxTokens int) string {
	budget := maxTokens * 4
	var b strings.Builder
	b.Grow(min(budget, 1<<20) + 256)
	dropped := map[string]int{}
	var order []string
	drop := func(kind string) {
		if dropped[kind] == 0 {
			order = append(order, kind)
		}
		dropped[kind]++
	}
	full := false
	for _, p := range parts {
		sep := 0
		if b.Len() > 0 {
			sep = 1
		}
		left := budget - b.Len() - sep
		// Defang only grows text, so a part longer than what is left is
		// cut anyway: defang just the prefix that can be kept. A tag cut
		// in two at the end cannot be completed by what follows.
		text, tooLong := p.text, len(p.text) > max(left, 0)
		if tooLong {
			text = cutUTF8(text, max(left, 0)+1)
		}
		text = Defang(text)
		cost := len(text)
		if p.kind == "image" || p.kind == "audio" {
			cost = max(cost, p.cost)
		}
		switch {
		case full || left <= 0:
			drop(p.kind)
		case cost <= left && !tooLong:
			if sep == 1 {
				b.WriteByte('\n')
			}
			b.WriteString(text)
		case p.kind == "image" || p.kind == "audio":
			drop(p.kind) // media is kept whole or not at all
		default:
			if sep == 1 {
				b.WriteByte('\n')
			}
			b.WriteString(cutUTF8(text, left))
			full = true
		}
	}
	b.WriteByte('\n')
	b.WriteString(TruncationMarker(maxTokens))
	for _, kind := range order {
		n := dropped[kind]
		noun := "block"
		if n != 1 {
			noun = "blocks"
		}
		fmt.Fprintf(&b, "\n[Dropped %d %s %s due to size limit]", n, kind, noun)
	}
	return b.String()
}

// cutUTF8 returns the longest prefix of s of at most n bytes that does not
// split a character.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// spillPath names a new spill file.
func spillPath(o OutputOptions, server, tool string) (string, error) {
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	r := o.Rand
	if r == nil {
		r = rand.Reader
	}
	var buf [4]byte
	if _, err := io.ReadFull(r, buf[:]); err != nil {
		return "", fmt.Errorf("naming the file: %w", err)
	}
	name := fmt.Sprintf("mcp-%s-%s-%s-%s.txt", fileNamePart(server), fileNamePart(tool),
		now().UTC().Format("20060102T150405.000Z"), hex.EncodeToString(buf[:]))
	session := o.Session
	if session == "" {
		session = processSession()
	}
	return filepath.Join(o.StateDir, ToolResultsDir, WorkspaceFolder(o.Workspace), fileNamePart(session), name), nil
}

// WorkspaceFolder is the folder under tool-results that a workspace's
// spill files go to: "<base name>-<8 hex digits of sha256 of the path>",
// or NoWorkspace for "".
func WorkspaceFolder(workspace string) string {
	if workspace == "" {
		return NoWorkspace
	}
	sum := sha256.Sum256([]byte(filepath.Clean(workspace)))
	return fileNamePart(filepath.Base(filepath.Clean(workspace))) + "-" + hex.EncodeToString(sum[:])[:8]
}

// removeExpiredSpills removes, under StateDir/tool-results, every session
// folder whose newest entry is older than the retention, the workspace
// folders that leaves empty, and expired files lying directly in
// tool-results (written before spills had folders). keep, the folder
// about to be written, stays. Failures are ignored: they cost disk, not
// the result. Links are removed, never followed.
func removeExpiredSpills(o OutputOptions, keep string) {
	retention := o.Retention
	if retention <= 0 {
		retention = DefaultSpillRetention
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	cutoff := now().Add(-retention)
	root := filepath.Join(o.StateDir, ToolResultsDir)
	expired := func(path string, fi os.FileInfo) bool {
		newest := fi.ModTime()
		if fi.IsDir() {
			entries, err := os.ReadDir(path)
			if err != nil {
				return false
			}
			for _, e := range entries {
				if info, err := e.Info(); err == nil && info.ModTime().After(newest) {
					newest = info.ModTime()
				}
			}
		}
		return newest.Before(cutoff)
	}
	tops, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, top := range tops {
		wsPath := filepath.Join(root, top.Name())
		fi, err := os.Lstat(wsPath)
		if err != nil {
			continue
		}
		if !fi.IsDir() {
			if expired(wsPath, fi) {
				os.Remove(wsPath)
			}
			continue
		}
		sessions, err := os.ReadDir(wsPath)
		if err != nil {
			continue
		}
		left := len(sessions)
		for _, se := range sessions {
			sPath := filepath.Join(wsPath, se.Name())
			if sPath == keep {
				continue
			}
			if info, err := os.Lstat(sPath); err == nil && expired(sPath, info) && os.RemoveAll(sPath) == nil {
				left--
			}
		}
		if left == 0 && !strings.HasPrefix(keep, wsPath+string(filepath.Separator)) {
			os.Remove(wsPath) // only if still empty
		}
	}
}

// fileNamePart makes a server or tool name safe and short in a file name.
func fileNamePart(s string) string {
	s = SanitizePart(s)
	if len(s) > 40 {
		s = s[:40]
	}
	return s
}

// previewBytes bounds the preview in a guide.
const previewBytes = 1500

// guide tells a model where its large result went and how to read it.
func guide(path, full string, maxTokens int) string {
	budget := maxTokens * 4
	lines := strings.Count(full, "\n") + 1
	longest, cur := 0, 0
	for i := 0; i < len(full); i++ {
		if full[i] == '\n' {
			longest = max(longest, cur)
			cur = 0
			continue
		}
		cur++
	}
	longest = max(longest, cur, 1)
	format := "plain text"
	if t := strings.TrimSpace(full[:min(len(full), 64)]); (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")) && json.Valid([]byte(full)) {
		format = "JSON (query it with jq, or read it in pages)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[Large output: this result is %d bytes (≈%d tokens), over the %d-token limit, so it was saved to a file instead of shown here.]\n",
		len(full), (len(full)+3)/4, maxTokens)
	fmt.Fprintf(&b, "File: %s\n", path)
	fmt.Fprintf(&b, "Size: %d bytes, %d lines. Format: %s.\n", len(full), lines, format)
	page := budget / 2 // half the limit per page leaves room to think
	if per := page / longest; per >= 1 {
		fmt.Fprintf(&b, "Read it in pages with your file-reading tool: %d lines at a time (offset 0, %d, %d, …; %d pages in all), or search it (e.g. grep) for what you need.\n",
			per, per, 2*per, (lines+per-1)/per)
	} else {
		fmt.Fprintf(&b, "Its lines are long (the longest is %d bytes), so read it by bytes: %d bytes at a time (offset 0, %d, %d, …; %d pages in all), or search it (e.g. grep) for what you need.\n",
			longest, page, page, 2*page, (len(full)+page-1)/page)
	}
	preview := cutUTF8(full, min(previewBytes, budget/2))
	if preview != "" {
		b.WriteString("Preview (the first " + strconv.Itoa(len(preview)) + " bytes):\n")
		b.WriteString(Defang(preview))
	}
	return b.String()
}
