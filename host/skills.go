package host

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
)

// SkillsExtension is the capability key of the skills extension (SEP-2640).
const SkillsExtension = "io.modelcontextprotocol/skills"

// ErrSkillVerification: a skill file's content does not match what the
// server's listing promised (digest, size or frontmatter). Nothing of the
// skill is used.
var ErrSkillVerification = errors.New("skill verification failed")

// Skill is one skill a server offers, as its listing describes it.
type Skill struct {
	Server string `json:"-"`
	// URI is the skill's SKILL.md, e.g. skill://pdf-processing/SKILL.md.
	URI string `json:"uri"`
	// Frontmatter is what SKILL.md's YAML frontmatter must say.
	Frontmatter map[string]any `json:"frontmatter"`
	// Resources are the skill's files, SKILL.md included, each with the
	// digest ("sha256:<hex>") and size its content must have.
	Resources []SkillFile `json:"resources"`
}

// SkillFile is one file of a skill.
type SkillFile struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   *int64 `json:"size"`
}

// LoadedSkill is a skill whose files were all read and verified.
type LoadedSkill struct {
	Skill Skill
	// Files maps each file's URI to its verified content.
	Files map[string][]byte
}

// Skills lists the skills of a server that offers the skills extension
// (SEP-2640); nil when it does not. It reads no skill file: files are
// retrieved only when a skill is loaded (LoadSkill).
func (h *Host) Skills(ctx context.Context, serverName string) ([]Skill, error) {
	s, c, err := h.liveServer(ctx, serverName)
	if err != nil {
		return nil, err
	}
	res := c.session.InitializeResult()
	if res == nil || res.Capabilities == nil || res.Capabilities.Extensions[SkillsExtension] == nil {
		return nil, nil
	}
	def := s.cfg.Effective
	if def.Type != config.TypeHTTP {
		return nil, fmt.Errorf("skills of %s: listing skills needs a Streamable HTTP server", serverName)
	}
	ctx, cancel := context.WithTimeout(ctx, s.callTimeout())
	defer cancel()
	var out []Skill
	cursor := ""
	for page := 0; page < 100; page++ {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		raw, err := s.extensionCall(ctx, c, "skills/list", params)
		if err != nil {
			return nil, fmt.Errorf("skills of %s: %w", serverName, err)
		}
		var r struct {
			Skills     []Skill `json:"skills"`
			NextCursor string  `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("skills of %s: the listing is not a skills/list result: %v", serverName, err)
		}
		for _, sk := range r.Skills {
			sk.Server = serverName
			out = append(out, sk)
		}
		if cursor = r.NextCursor; cursor == "" {
			return out, nil
		}
	}
	return nil, fmt.Errorf("skills of %s: more than 100 pages", serverName)
}

// LoadSkill reads a skill's files, SKILL.md first. Each must match its
// listed digest and size, and SKILL.md's frontmatter must equal the
// listing's field by field; on any mismatch it stops, reads nothing more
// and returns an error wrapping ErrSkillVerification.
func (h *Host) LoadSkill(ctx context.Context, sk Skill) (*LoadedSkill, error) {
	files := map[string]SkillFile{}
	for _, f := range sk.Resources {
		files[f.URI] = f
	}
	main, ok := files[sk.URI]
	if !ok {
		return nil, fmt.Errorf("skill %s: the listing has no entry for its SKILL.md: %w", sk.URI, ErrSkillVerification)
	}
	loaded := &LoadedSkill{Skill: sk, Files: map[string][]byte{}}
	read := func(f SkillFile) error {
		res, err := h.ReadResource(ctx, sk.Server, f.URI)
		if err != nil {
			return err
		}
		data, err := resourceBytes(res, f.URI)
		if err != nil {
			return err
		}
		if err := verifySkillFile(f, data); err != nil {
			return err
		}
		loaded.Files[f.URI] = data
		return nil
	}
	if err := read(main); err != nil {
		return nil, err
	}
	fm, err := parseFrontmatter(loaded.Files[sk.URI])
	if err != nil {
		return nil, fmt.Errorf("skill %s: %v: %w", sk.URI, err, ErrSkillVerification)
	}
	if err := sameFrontmatter(sk.Frontmatter, fm); err != nil {
		return nil, fmt.Errorf("skill %s: %v: %w", sk.URI, err, ErrSkillVerification)
	}
	for _, f := range sk.Resources {
		if f.URI == sk.URI {
			continue
		}
		if err := read(f); err != nil {
			return nil, err
		}
	}
	return loaded, nil
}

func resourceBytes(res *mcp.ReadResourceResult, uri string) ([]byte, error) {
	for _, c := range res.Contents {
		if c.URI != uri && c.URI != "" {
			continue
		}
		if c.Blob != nil {
			return c.Blob, nil
		}
		return []byte(c.Text), nil
	}
	return nil, fmt.Errorf("reading %s: no content for it", uri)
}

// verifySkillFile checks content against its listing entry: the size
// first (a mismatch is a verification failure by itself), then the digest.
func verifySkillFile(f SkillFile, data []byte) error {
	if f.Size != nil && int64(len(data)) != *f.Size {
		return fmt.Errorf("%s is %d bytes, the listing says %d: %w", f.URI, len(data), *f.Size, ErrSkillVerification)
	}
	alg, want, ok := strings.Cut(f.Digest, ":")
	if !ok || alg != "sha256" {
		return fmt.Errorf("%s has no sha256 digest in the listing: %w", f.URI, ErrSkillVerification)
	}
	sum := sha256.Sum256(data)
	if !strings.EqualFold(hex.EncodeToString(sum[:]), want) {
		return fmt.Errorf("%s does not match its listed digest: %w", f.URI, ErrSkillVerification)
	}
	return nil
}

// parseFrontmatter reads the YAML frontmatter of a SKILL.md: the block
// between a first line "---" and the next "---". It understands the
// top-level "key: value" scalars skills use (plain, single- or
// double-quoted); nested blocks are kept as their raw text.
func parseFrontmatter(data []byte) (map[string]string, error) {
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return nil, errors.New("SKILL.md has no frontmatter")
	}
	block, _, ok := strings.Cut(rest, "\n---")
	if !ok {
		return nil, errors.New("SKILL.md's frontmatter is not closed")
	}
	out := map[string]string{}
	last := ""
	for i, line := range strings.Split(block, "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			if last == "" {
				return nil, fmt.Errorf("frontmatter line %d is indented under nothing", i+1)
			}
			out[last] += "\n" + line
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("frontmatter line %d is not \"key: value\"", i+1)
		}
		k = strings.TrimSpace(k)
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("frontmatter key %q appears twice", k)
		}
		out[k] = unquoteYAML(strings.TrimSpace(v))
		last = k
	}
	return out, nil
}

func unquoteYAML(v string) string {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		var s string
		if json.Unmarshal([]byte(v), &s) == nil {
			return s
		}
	}
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	}
	return v
}

// sameFrontmatter compares the listing's frontmatter with the file's,
// field by field, both ways.
func sameFrontmatter(listed map[string]any, file map[string]string) error {
	for k, v := range listed {
		got, ok := file[k]
		if !ok {
			return fmt.Errorf("SKILL.md's frontmatter lacks %q", k)
		}
		if s, isStr := v.(string); isStr && s != got {
			return fmt.Errorf("SKILL.md's frontmatter %q differs from the listing", k)
		}
	}
	for k := range file {
		if _, ok := listed[k]; !ok {
			return fmt.Errorf("SKILL.md's frontmatter has %q, which the listing does not", k)
		}
	}
	return nil
}

var extensionID atomic.Int64

// extensionCall sends one request of an extension method the SDK does
// not know over the server's Streamable HTTP endpoint, in the live
// session, and returns its result.
func (s *server) extensionCall(ctx context.Context, c *conn, method string, params map[string]any) (json.RawMessage, error) {
	def := s.cfg.Effective
	hc, err := s.httpClient(ctx, def, nil)
	if err != nil {
		return nil, err
	}
	if c.protocol >= "2026-07-28" {
		// Per-request metadata of the stateless revision.
		params["_meta"] = map[string]any{
			mcp.MetaKeyProtocolVersion:    c.protocol,
			mcp.MetaKeyClientInfo:         map[string]any{"name": s.h.opts.ClientName, "version": s.h.opts.ClientVersion},
			mcp.MetaKeyClientCapabilities: map[string]any{},
		}
	}
	id := fmt.Sprintf("switchboard-%d", extensionID.Add(1))
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, def.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Method", method)
	if c.protocol != "" {
		req.Header.Set("MCP-Protocol-Version", c.protocol)
	}
	if sid := c.session.ID(); sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: HTTP %d", method, resp.StatusCode)
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return readRPCResult(io.LimitReader(resp.Body, 8<<20), ct == "text/event-stream", id)
}

// readRPCResult finds the response with id in a JSON body or an SSE
// stream of JSON-RPC messages and returns its result.
func readRPCResult(r io.Reader, sse bool, id string) (json.RawMessage, error) {
	type response struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	wantID, _ := json.Marshal(id)
	check := func(data []byte) (json.RawMessage, bool, error) {
		var m response
		if json.Unmarshal(data, &m) != nil || !bytes.Equal(bytes.TrimSpace(m.ID), wantID) {
			return nil, false, nil
		}
		if m.Error != nil {
			return nil, true, fmt.Errorf("server error %d: %s", m.Error.Code, oneLine(m.Error.Message))
		}
		if len(m.Result) == 0 {
			return nil, true, errors.New("response without a result")
		}
		return m.Result, true, nil
	}
	if !sse {
		data, err := io.ReadAll(r)
		if err != nil {
			return nil, err
		}
		res, ok, err := check(data)
		if !ok && err == nil {
			err = errors.New("the answer is not the response to the request")
		}
		return res, err
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	var data []byte
	for {
		more := sc.Scan()
		line := sc.Text()
		if !more || line == "" { // end of an event
			if len(data) > 0 {
				if res, ok, err := check(data); ok {
					return res, err
				}
			}
			data = data[:0]
			if !more {
				break
			}
			continue
		}
		if v, ok := strings.CutPrefix(line, "data:"); ok {
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, strings.TrimPrefix(v, " ")...)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, errors.New("the stream ended without the response")
}
