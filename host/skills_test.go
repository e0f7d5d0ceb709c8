package host

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

const skillMD = "---\nname: pdf-processing\ndescription: \"Extract, fill: and assemble\"\nlicense: 'it''s MIT'\nmetadata:\n  author: x\n---\n\nSkill body.\n"

func TestParseFrontmatter(t *testing.T) {
	got, err := parseFrontmatter([]byte(skillMD))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"name": "pdf-processing", "description": "Extract, fill: and assemble", "license": "it's MIT", "metadata": "\n  author: x"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("frontmatter (-want +got):\n%s", d)
	}
	for _, bad := range []string{"no frontmatter", "---\nname: x\n", "---\n  indented: x\n---\n", "---\nname: a\nname: b\n---\n", "---\njust words\n---\n"} {
		if _, err := parseFrontmatter([]byte(bad)); err == nil {
			t.Errorf("parseFrontmatter(%q) accepted", bad)
		}
	}
}

func TestSameFrontmatter(t *testing.T) {
	file := map[string]string{"name": "pdf", "description": "d"}
	if err := sameFrontmatter(map[string]any{"name": "pdf", "description": "d"}, file); err != nil {
		t.Errorf("equal frontmatter refused: %v", err)
	}
	for _, listed := range []map[string]any{
		{"name": "pdf", "description": "other"},
		{"name": "pdf"},
		{"name": "pdf", "description": "d", "license": "MIT"},
	} {
		if err := sameFrontmatter(listed, file); err == nil {
			t.Errorf("listing %v accepted against file %v", listed, file)
		}
	}
}

func TestVerifySkillFile(t *testing.T) {
	data := []byte(skillMD)
	sum := sha256.Sum256(data)
	size := int64(len(data))
	good := SkillFile{URI: "skill://x/SKILL.md", Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: &size}
	if err := verifySkillFile(good, data); err != nil {
		t.Fatalf("good file refused: %v", err)
	}
	bigger := size + 1
	for name, f := range map[string]SkillFile{
		"size":      {URI: good.URI, Digest: good.Digest, Size: &bigger},
		"digest":    {URI: good.URI, Digest: "sha256:" + strings.Repeat("0", 64), Size: &size},
		"algorithm": {URI: good.URI, Digest: "md5:" + hex.EncodeToString(sum[:16])},
		"none":      {URI: good.URI},
	} {
		if err := verifySkillFile(f, data); !errors.Is(err, ErrSkillVerification) {
			t.Errorf("%s mismatch: err = %v, want ErrSkillVerification", name, err)
		}
	}
}

func TestReadRPCResult(t *testing.T) {
	res, err := readRPCResult(strings.NewReader(`{"jsonrpc":"2.0","id":"a","result":{"skills":[]}}`), false, "a")
	if err != nil || string(res) != `{"skills":[]}` {
		t.Errorf("JSON answer = %s, %v", res, err)
	}
	stream := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"a\",\n data: \"result\":{\"ok\":true}}\n\n"
	stream = strings.Replace(stream, "\n data:", "\ndata:", 1)
	res, err = readRPCResult(strings.NewReader(stream), true, "a")
	if err != nil || string(res) != `{"ok":true}` {
		t.Errorf("SSE answer = %s, %v", res, err)
	}
	if _, err := readRPCResult(strings.NewReader(`{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"no such\nmethod"}}`), false, "a"); err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("error answer = %v", err)
	}
	if _, err := readRPCResult(strings.NewReader(`{"jsonrpc":"2.0","id":"b","result":{}}`), false, "a"); err == nil {
		t.Errorf("another request's answer accepted")
	}
	if _, err := readRPCResult(strings.NewReader("data: {}\n\n"), true, "a"); err == nil {
		t.Errorf("a stream without the answer accepted")
	}
}

func FuzzParseFrontmatter(f *testing.F) {
	f.Add([]byte(skillMD))
	f.Add([]byte("---\r\nname: x\r\n---\r\n"))
	f.Add([]byte("---\nk: \"\\u00e9\"\n---"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fm, err := parseFrontmatter(data)
		if err != nil {
			return
		}
		for k := range fm {
			if k == "" || strings.ContainsAny(k, "\n") {
				t.Fatalf("bad key %q", k)
			}
		}
		// A file always agrees with its own frontmatter.
		listed := map[string]any{}
		for k, v := range fm {
			listed[k] = v
		}
		if err := sameFrontmatter(listed, fm); err != nil {
			t.Fatalf("frontmatter disagrees with itself: %v", err)
		}
	})
}

func FuzzReadRPCResult(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":"a","result":{"skills":[]}}`), false)
	f.Add([]byte("data: {\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{}}\n\n"), true)
	f.Add([]byte("data: {\"id\":\"a\",\"error\":{\"code\":1,\"message\":\"x\"}}\n"), true)
	f.Fuzz(func(t *testing.T, data []byte, sse bool) {
		res, err := readRPCResult(strings.NewReader(string(data)), sse, "a")
		if err != nil {
			if res != nil {
				t.Fatalf("error with a result")
			}
			if msg := err.Error(); utf8.ValidString(msg) && strings.Contains(msg, "\n") {
				t.Fatalf("multi-line error %q", msg)
			}
			return
		}
		if len(res) == 0 {
			t.Fatalf("empty result without an error")
		}
	})
}
