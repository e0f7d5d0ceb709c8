package config

import (
	"bufio"
	"bytes"
	"path"
	"strings"
)

// Package runners are the programs that download a package and run it
// (npx, uvx, …). A sandboxed server started by one needs the runner's
// registry and cache; what the user configured for them is read from the
// user's files and environment only, never from the repository's (its
// .npmrc, uv.toml or pyproject.toml), since those would change what runs.

// ProgramName is a command's program name, lower case, without a
// directory (either separator) or a Windows .exe or .cmd: "npx" for
// C:\Program Files\nodejs\npx.cmd.
func ProgramName(command string) string {
	base := strings.ToLower(path.Base(strings.ReplaceAll(command, `\`, "/")))
	return strings.TrimSuffix(strings.TrimSuffix(base, ".exe"), ".cmd")
}

// Runner names the package runner that command is, by its program's
// name: "npm" (npx, npm), "uv" (uvx, uv), "pipx", "bun" (bunx, bun), or "".
func Runner(command string) string {
	switch ProgramName(command) {
	case "npx", "npm":
		return "npm"
	case "uvx", "uv":
		return "uv"
	case "pipx":
		return "pipx"
	case "bunx", "bun":
		return "bun"
	}
	return ""
}

// ParseNpmrc reads an .npmrc file's settings: "key = value" lines, "#" and
// ";" comments, a value's surrounding quotes removed and ${VAR} left as
// written (the caller expands what it uses). Keys are kept as written,
// lower-cased; a later line wins. Lines that are no setting are skipped,
// as npm skips them.
func ParseNpmrc(b []byte) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		if k == "" {
			continue
		}
		out[k] = unquote(v)
	}
	return out
}

// ParseIni reads an INI file (pip.conf) into sections of settings: keys
// lower-cased, "_" read as "-" (pip takes both), "#" and ";" comments, a
// later line wins. Continuation lines are skipped.
func ParseIni(b []byte) map[string]map[string]string {
	out := map[string]map[string]string{}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		raw := sc.Text()
		line := strings.TrimSpace(raw)
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
			continue
		case line[0] == '[' && strings.HasSuffix(line, "]"):
			section = strings.ToLower(strings.TrimSpace(line[1 : len(line)-1]))
			continue
		case raw[0] == ' ' || raw[0] == '\t': // a continuation
			continue
		}
		i := strings.IndexAny(line, "=:")
		if i <= 0 {
			continue
		}
		k := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(line[:i])), "_", "-")
		if out[section] == nil {
			out[section] = map[string]string{}
		}
		out[section][k] = strings.TrimSpace(line[i+1:])
	}
	return out
}

// ParseUvIndex reads, from a uv.toml file, the index uv downloads from:
// the top-level "index-url" (the older setting), else the url of an
// [[index]] table with "default = true". It reads the small part of TOML
// those take (basic or literal strings, one per line); "" when neither is
// there.
func ParseUvIndex(b []byte) string {
	const (
		top = iota
		index
		other
	)
	section := top
	var topURL, defURL, url string
	isDefault := false
	endIndex := func() {
		if section == index && isDefault && url != "" && defURL == "" {
			defURL = url
		}
		url, isDefault = "", false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		if line[0] == '[' {
			endIndex()
			section = other
			if line == "[[index]]" {
				section = index
			}
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if i := strings.Index(v, " #"); i >= 0 {
			v = strings.TrimSpace(v[:i])
		}
		switch {
		case section == top && k == "index-url":
			topURL = unquote(v)
		case section == index && k == "url":
			url = unquote(v)
		case section == index && k == "default":
			isDefault = v == "true"
		}
	}
	endIndex()
	if topURL != "" {
		return topURL
	}
	return defURL
}

// unquote removes one pair of surrounding quotes ("…" or '…').
func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		return v[1 : len(v)-1]
	}
	return v
}
