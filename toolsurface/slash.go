package toolsurface

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"unicode"
)

// SlashCommand returns the slash command a prompt of a server becomes:
// "/<server>:<prompt>". Both parts are sanitized so that the command
// is one shell word and splits back unambiguously: every rune that is not
// an ASCII letter, digit, '_', '-' or '.' becomes '_' (':' , '/', spaces
// and control characters included), and an empty part becomes "_".
//
// Two prompts can sanitize to one command; SlashCommands gives each its
// own.
func SlashCommand(server, prompt string) string {
	return "/" + slashPart(server) + ":" + slashPart(prompt)
}

func slashPart(s string) string {
	if s == "" {
		return "_"
	}
	return strings.Map(func(r rune) rune {
		if legal(r) || r == '.' {
			return r
		}
		return '_'
	}, s)
}

// ParseSlashCommand splits "/server:prompt" (the slash may be left out) at
// the first ':'. Server names hold no ':', prompt names may. It refuses,
// with a one-line error, a command without a server or a prompt.
func ParseSlashCommand(s string) (server, prompt string, err error) {
	rest := strings.TrimPrefix(strings.TrimSpace(s), "/")
	server, prompt, ok := strings.Cut(rest, ":")
	if !ok || server == "" || prompt == "" {
		return "", "", fmt.Errorf("invalid prompt command %s: write /<server>:<prompt>", quote(s))
	}
	return server, prompt, nil
}

// PromptRef names one prompt of one server, as the server spells it.
type PromptRef struct {
	Server, Prompt string
}

// SlashCommands assigns each prompt of a set its own slash command and
// maps commands back. When prompts collide after sanitizing (say "a b" and
// "a_b"), the one whose name needs no sanitizing keeps the plain command
// and the others end in "-" and 6 hex digits of a hash of their names, so
// the assignment does not depend on the order prompts are listed in. The
// zero value is empty; build one with NewSlashCommands. It is immutable
// and safe for concurrent use.
type SlashCommands struct {
	byRef map[PromptRef]string
	byCmd map[string]PromptRef
}

// NewSlashCommands assigns commands to refs (duplicates count once).
func NewSlashCommands(refs []PromptRef) *SlashCommands {
	c := &SlashCommands{byRef: map[PromptRef]string{}, byCmd: map[string]PromptRef{}}
	groups := map[string][]PromptRef{}
	for _, r := range refs {
		if _, dup := c.byRef[r]; dup {
			continue
		}
		c.byRef[r] = ""
		cmd := SlashCommand(r.Server, r.Prompt)
		groups[cmd] = append(groups[cmd], r)
	}
	cmds := make([]string, 0, len(groups))
	for cmd := range groups {
		cmds = append(cmds, cmd)
	}
	sort.Strings(cmds)
	var hashed []PromptRef
	for _, cmd := range cmds {
		g := groups[cmd]
		for _, r := range g {
			if len(g) == 1 || "/"+r.Server+":"+r.Prompt == cmd {
				c.set(r, cmd)
			} else {
				hashed = append(hashed, r)
			}
		}
	}
	sort.Slice(hashed, func(i, j int) bool {
		if hashed[i].Server != hashed[j].Server {
			return hashed[i].Server < hashed[j].Server
		}
		return hashed[i].Prompt < hashed[j].Prompt
	})
	for _, r := range hashed {
		sum := sha256.Sum256([]byte(r.Server + "\x00" + r.Prompt))
		h := hex.EncodeToString(sum[:])
		// Lengthen the hash in the (astronomically rare) case the short
		// one is taken.
		for n := 6; ; n += 2 {
			cmd := SlashCommand(r.Server, r.Prompt) + "-" + h[:min(n, len(h))]
			if _, taken := c.byCmd[cmd]; !taken || n >= len(h) {
				c.set(r, cmd)
				break
			}
		}
	}
	return c
}

func (c *SlashCommands) set(r PromptRef, cmd string) {
	c.byRef[r] = cmd
	c.byCmd[cmd] = r
}

// Command returns the command of a prompt in the set.
func (c *SlashCommands) Command(server, prompt string) (string, bool) {
	if c == nil {
		return "", false
	}
	cmd, ok := c.byRef[PromptRef{server, prompt}]
	return cmd, ok
}

// Resolve maps a command ("/server:prompt", slash optional) back to its
// prompt. A command that is not in the set, but names a prompt of the set
// exactly as its server spells it, resolves to that prompt too.
func (c *SlashCommands) Resolve(cmd string) (PromptRef, bool) {
	if c == nil {
		return PromptRef{}, false
	}
	cmd = strings.TrimSpace(cmd)
	if !strings.HasPrefix(cmd, "/") {
		cmd = "/" + cmd
	}
	if r, ok := c.byCmd[cmd]; ok {
		return r, true
	}
	server, prompt, err := ParseSlashCommand(cmd)
	if err != nil {
		return PromptRef{}, false
	}
	r := PromptRef{server, prompt}
	_, ok := c.byRef[r]
	return r, ok
}

// ResourceRef returns how a resource of a server is referenced:
// "@<server>:<uri>".
func ResourceRef(server, uri string) string { return "@" + server + ":" + uri }

// ParseResourceRef splits "@server:uri" (the @ may be left out) at the
// first ':' — server names hold none, URIs do. The server must be a legal
// server name (letters, digits, '_', '-', '.') and the URI must be
// non-empty and free of spaces and control characters; anything else is a
// one-line error saying what a reference looks like.
func ParseResourceRef(s string) (server, uri string, err error) {
	rest := strings.TrimPrefix(strings.TrimSpace(s), "@")
	server, uri, ok := strings.Cut(rest, ":")
	switch {
	case !ok || server == "" || uri == "":
		return "", "", fmt.Errorf("invalid resource reference %s: write @<server>:<uri>, e.g. @docs:file:///README.md", quote(s))
	case strings.IndexFunc(server, func(r rune) bool { return !legal(r) && r != '.' }) >= 0:
		return "", "", fmt.Errorf("invalid resource reference %s: server %s is not a server name", quote(s), quote(server))
	case strings.IndexFunc(uri, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		return "", "", fmt.Errorf("invalid resource reference %s: the URI holds a space or control character", quote(s))
	}
	return server, uri, nil
}
