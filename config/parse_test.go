package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ptr[T any](v T) *T { return &v }

func TestValidName(t *testing.T) {
	for name, want := range map[string]bool{
		"github": true, "my-server.v2_x": true, "A": true, strings.Repeat("a", 64): true,
		"": false, strings.Repeat("a", 65): false, "has space": false, "slash/x": false,
		"colon:x": false, "ünï": false, "star*": false,
	} {
		if got := ValidName(name); got != want {
			t.Errorf("ValidName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestLineCol(t *testing.T) {
	data := []byte("ab\nü\tx\n\nz")
	tests := []struct{ off, line, col int }{
		{-5, 1, 1}, {0, 1, 1}, {2, 1, 3}, {3, 2, 1},
		{5, 2, 2}, // after the two bytes of ü: one character
		{6, 2, 3}, {8, 3, 1}, {9, 4, 1}, {10, 4, 2}, {99, 4, 2},
	}
	for _, tt := range tests {
		line, col := LineCol(data, tt.off)
		if line != tt.line || col != tt.col {
			t.Errorf("LineCol(%d) = %d:%d, want %d:%d", tt.off, line, col, tt.line, tt.col)
		}
	}
}

func TestParseServersTypes(t *testing.T) {
	const f = "mcp.json"
	data := `{
  // JSONC: comments and trailing commas
  "mcpServers": {
    "cmd": { "command": "npx", "args": ["-y", "pkg",], },
    "remote": { "url": "https://example.com/mcp" },
    "sse": { "type": "sse", "url": "http://localhost:3000/sse" },
    "alias1": { "transport": "http", "url": "https://a" },
    "alias2": { "type": "streamable_http", "url": "https://b" },
    "alias3": { "type": "streamable-http", "url": "https://c" },
    "full": {
      "type": "stdio", "command": "node", "args": ["s.js"], "env": {"K": "v"},
      "cwd": "/srv", "enabled": false, "description": "d", "timeout": 5000,
      "startup_timeout": 100, "defer_loading": true,
      "tools": {"t": {"defer_loading": false}}, "headersHelper": "h",
      "env_passthrough": ["AWS_PROFILE"], "headers": null
    }
  }
}`
	servers, pos, diags := ParseServers(f, []byte(data))
	if len(diags) != 0 {
		t.Fatalf("unexpected diagnostics: %v", diags)
	}
	want := map[string]Server{
		"cmd":    {Command: "npx", Args: []string{"-y", "pkg"}},
		"remote": {URL: "https://example.com/mcp"},
		"sse":    {Type: TypeSSE, URL: "http://localhost:3000/sse"},
		"alias1": {Type: TypeHTTP, URL: "https://a"},
		"alias2": {Type: TypeHTTP, URL: "https://b"},
		"alias3": {Type: TypeHTTP, URL: "https://c"},
		"full": {
			Type: TypeStdio, Command: "node", Args: []string{"s.js"}, Env: map[string]string{"K": "v"},
			Cwd: "/srv", Enabled: ptr(false), Description: "d", Timeout: 5000, StartupTimeout: 100,
			DeferLoading: ptr(true), Tools: map[string]ToolConfig{"t": {DeferLoading: ptr(false)}},
			HeadersHelper: "h", EnvPassthrough: []string{"AWS_PROFILE"},
		},
	}
	if diff := cmp.Diff(want, servers); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Position{File: f, Line: 4, Col: 5}, pos["cmd"]); diff != "" {
		t.Errorf("position of cmd (-want +got):\n%s", diff)
	}
	inferred := map[string]Type{}
	for name, s := range servers {
		inferred[name] = InferType(s)
	}
	wantTypes := map[string]Type{"cmd": TypeStdio, "remote": TypeHTTP, "sse": TypeSSE,
		"alias1": TypeHTTP, "alias2": TypeHTTP, "alias3": TypeHTTP, "full": TypeStdio}
	if diff := cmp.Diff(wantTypes, inferred); diff != "" {
		t.Errorf("inferred types (-want +got):\n%s", diff)
	}
}

// TestParseServersDiagnostics pins every validation message, with its
// exact place: each case is one server in a file of its own, written on
// line 3 with the server name at column 5.
func TestParseServersDiagnostics(t *testing.T) {
	const f = "/p/.mcp.json"
	at := func(col int) Position { return Position{File: f, Line: 3, Col: col} }
	tests := []struct {
		name string
		def  string // the server entry, starting at line 3 column 5
		want []Diagnostic
	}{
		{"neither command nor url", `"x": {}`, []Diagnostic{{
			Severity: SeverityError, Position: at(5), Server: "x",
			Message: `neither "command" nor "url" is set`,
			Fix:     `add "command" (and "args") for a local server, or "url" for a remote one`,
		}}},
		{"stdio without command", `"x": {"type": "stdio", "url": "https://a"}`, []Diagnostic{{
			Severity: SeverityError, Position: at(5), Server: "x", Field: "command",
			Message: "a stdio server needs a command", Fix: `add "command": the program to run`,
		}, {
			Severity: SeverityWarning, Position: at(5), Server: "x", Field: "url",
			Message: "ignored: a stdio server is started from its command, not reached by url",
			Fix:     `remove "url", or set "type": "http" for a remote server`,
		}}},
		// A key holding '=' reaches the process as another variable: here
		// NODE_OPTIONS, which the approval prompt would not flag (issue 22).
		{"env key with =", `"x": {"command": "node", "env": {"NODE_OPTIONS=--require /x/hook.js --max-old-space-size": "4096"}}`, []Diagnostic{{
			Severity: SeverityError, Position: at(5), Server: "x", Field: "env",
			Message: `the variable name "NODE_OPTIONS=--require /x/hook.js --max-old-space-size" contains '=', which would make it another variable`,
			Fix:     "use a plain variable name (letters, digits and '_'); the value goes after the ':'",
		}}},
		{"env key with NUL", `"x": {"command": "node", "env": {"LD_PRELOAD\u0000X": "/x.so"}}`, []Diagnostic{{
			Severity: SeverityError, Position: at(5), Server: "x", Field: "env",
			Message: `the variable name "LD_PRELOAD\x00X" contains a control character`,
			Fix:     "use a plain variable name (letters, digits and '_'); the value goes after the ':'",
		}}},
		{"empty env key", `"x": {"command": "node", "env": {"": "v"}}`, []Diagnostic{{
			Severity: SeverityError, Position: at(5), Server: "x", Field: "env",
			Message: `the variable name "" is empty`,
			Fix:     "use a plain variable name (letters, digits and '_'); the value goes after the ':'",
		}}},
		{"unknown tasks value", `"x": {"command": "node", "tasks": "always"}`, []Diagnostic{{
			Severity: SeverityError, Position: at(39), Server: "x", Field: "tasks",
			Message: `unknown value "always"`,
			Fix:     `write "tasks": "optional" (also call tools that allow a task as tasks) or "required" (the default)`,
		}}},
		{"passthrough name with =", `"x": {"command": "node", "env_passthrough": ["PATH=/evil"]}`, []Diagnostic{{
			Severity: SeverityError, Position: at(5), Server: "x", Field: "env_passthrough",
			Message: `the variable name "PATH=/evil" contains '=', which would make it another variable`,
			Fix:     "list plain variable names (letters, digits and '_')",
		}}},
		{"header name with a colon", `"x": {"url": "https://a", "headers": {"X-A: b\r\nAuthorization": "v"}}`, []Diagnostic{{
			Severity: SeverityError, Position: at(5), Server: "x", Field: "headers",
			Message: `"X-A: b\r\nAuthorization" is not a valid HTTP header name`,
			Fix:     `write the name alone ("Authorization"), the value after the ':'`,
		}}},
		// HTTP header names ignore case: one of the two would be sent,
		// which one chosen by map order, a credential at random.
		{"header twice in two cases", `"x": {"url": "https://a", "headers": {"Authorization": "Bearer a", "authorization": "Bearer b"}}`, []Diagnostic{{
			Severity: SeverityError, Position: at(5), Server: "x", Field: "headers",
			Message: `"Authorization" and "authorization" are one HTTP header (its name ignores case): only one of them would be sent`,
			Fix:     "keep one of them",
		}}},
		{"header value with a line break", `"x": {"url": "https://a", "headers": {"X-A": "b\r\nAuthorization: Bearer x"}}`, []Diagnostic{{
			Severity: SeverityError, Position: at(5), Server: "x", Field: "headers",
			Message: `the value of header "X-A" holds a control character (a line break, say)`,
			Fix:     "write the value on one line, without control characters",
		}}},
		{"http without url", `"x": {"type": "http"}`, []Diagnostic{{
			Severity: SeverityError, Position: at(5), Server: "x", Field: "url",
			Message: "an http server needs a url", Fix: `add "url": "https://…"`,
		}}},
		{"sse with a non-http url", `"x": {"type": "sse", "url": "ftp://h/x"}`, []Diagnostic{{
			Severity: SeverityError, Position: at(33), Server: "x", Field: "url",
			Message: `the url scheme must be http or https, not "ftp"`, Fix: fixURL,
		}}},
		{"url without scheme", `"x": {"url": "example.com/mcp"}`, []Diagnostic{{
			Severity: SeverityError, Position: at(18), Server: "x", Field: "url",
			Message: "the url must start with http:// or https://", Fix: fixURL,
		}}},
		{"url without host", `"x": {"url": "https:///mcp"}`, []Diagnostic{{
			Severity: SeverityError, Position: at(18), Server: "x", Field: "url",
			Message: "the url has no host", Fix: fixURL,
		}}},
		{"unknown type", `"x": {"type": "websocket", "url": "wss://a"}`, []Diagnostic{{
			Severity: SeverityError, Position: at(19), Server: "x", Field: "type",
			Message: `unknown transport "websocket"`, Fix: `use "stdio", "sse" or "http"`,
		}}},
		{"type and transport disagree", `"x": {"type": "sse", "transport": "http", "url": "https://a"}`, []Diagnostic{{
			Severity: SeverityError, Position: at(39), Server: "x", Field: "transport",
			Message: `"transport" says "http" but "type" says "sse"`, Fix: `keep only one of "type" and "transport"`,
		}}},
		{"args not an array", `"x": {"command": "a", "args": "-v"}`, []Diagnostic{{
			Severity: SeverityError, Position: at(35), Server: "x", Field: "args",
			Message: "must be an array of strings, not a string", Fix: `write "args": ["…", "…"]`,
		}}},
		{"args item not a string", `"x": {"command": "a", "args": ["-p", 80]}`, []Diagnostic{{
			Severity: SeverityError, Position: at(42), Server: "x", Field: "args",
			Message: "item 1 must be a string, not a number", Fix: "quote it: every item is passed as a string",
		}}},
		{"env value not a string", `"x": {"command": "a", "env": {"PORT": 80}}`, []Diagnostic{{
			Severity: SeverityError, Position: at(43), Server: "x", Field: "env.PORT",
			Message: "must be a string, not a number", Fix: "quote the value",
		}}},
		{"env not an object", `"x": {"command": "a", "env": ["A=b"]}`, []Diagnostic{{
			Severity: SeverityError, Position: at(34), Server: "x", Field: "env",
			Message: "must be an object of string values, not an array", Fix: `write "env": { "NAME": "value" }`,
		}}},
		{"headers not an object", `"x": {"url": "https://a", "headers": "A: b"}`, []Diagnostic{{
			Severity: SeverityError, Position: at(42), Server: "x", Field: "headers",
			Message: "must be an object of string values, not a string", Fix: `write "headers": { "NAME": "value" }`,
		}}},
		{"negative timeout", `"x": {"command": "a", "timeout": -1}`, []Diagnostic{{
			Severity: SeverityError, Position: at(38), Server: "x", Field: "timeout",
			Message: "must not be negative", Fix: `write "timeout": 30000 (milliseconds)`,
		}}},
		{"timeout as string", `"x": {"command": "a", "startup_timeout": "30s"}`, []Diagnostic{{
			Severity: SeverityError, Position: at(46), Server: "x", Field: "startup_timeout",
			Message: "must be a number of milliseconds, not a string", Fix: `write "startup_timeout": 30000 (milliseconds)`,
		}}},
		{"fractional timeout", `"x": {"command": "a", "timeout": 1.5}`, []Diagnostic{{
			Severity: SeverityError, Position: at(38), Server: "x", Field: "timeout",
			Message: "must be a whole number of milliseconds", Fix: `write "timeout": 30000 (milliseconds)`,
		}}},
		{"huge timeout", `"x": {"command": "a", "timeout": 1e300}`, []Diagnostic{{
			Severity: SeverityError, Position: at(38), Server: "x", Field: "timeout",
			Message: "is too large (at most 2147483647 ms)", Fix: `write "timeout": 30000 (milliseconds)`,
		}}},
		{"enabled not a bool", `"x": {"command": "a", "enabled": "no"}`, []Diagnostic{{
			Severity: SeverityError, Position: at(38), Server: "x", Field: "enabled",
			Message: "must be true or false, not a string", Fix: `write "enabled": true or false`,
		}}},
		{"command not a string", `"x": {"command": ["npx"]}`, []Diagnostic{{
			Severity: SeverityError, Position: at(22), Server: "x", Field: "command",
			Message: "must be a string, not an array", Fix: `write "command": "…"`,
		}, {
			Severity: SeverityError, Position: at(5), Server: "x",
			Message: `neither "command" nor "url" is set`,
			Fix:     `add "command" (and "args") for a local server, or "url" for a remote one`,
		}}},
		{"empty command", `"x": {"command": ""}`, []Diagnostic{{
			Severity: SeverityError, Position: at(5), Server: "x", Field: "command",
			Message: "command is empty", Fix: `set "command" to the program to run`,
		}}},
		{"definition not an object", `"x": "npx foo"`, []Diagnostic{{
			Severity: SeverityError, Position: at(10), Server: "x",
			Message: "a server definition must be a JSON object, not a string",
			Fix:     `write { "command": "…", "args": […] } or { "type": "http", "url": "https://…" }`,
		}}},
		{"illegal name", `"my server": {"command": "a"}`, []Diagnostic{{
			Severity: SeverityError, Position: at(5), Server: "my server",
			Message: "illegal server name: use 1 to 64 letters, digits, '_', '.' or '-'",
			Fix:     `rename the server, e.g. "my_server"`,
		}}},
		{"unknown field suggests", `"x": {"command": "a", "arg": ["b"]}`, []Diagnostic{{
			Severity: SeverityWarning, Position: at(27), Server: "x", Field: "arg",
			Message: "unknown field; it is ignored", Fix: `did you mean "args"?`, UnknownField: true,
		}}},
		{"unknown field camel case", `"x": {"command": "a", "startupTimeout": 5}`, []Diagnostic{{
			Severity: SeverityWarning, Position: at(27), Server: "x", Field: "startupTimeout",
			Message: "unknown field; it is ignored", Fix: `did you mean "startup_timeout"?`, UnknownField: true,
		}}},
		{"unknown field far", `"x": {"command": "a", "zzzzzz": 1}`, []Diagnostic{{
			Severity: SeverityWarning, Position: at(27), Server: "x", Field: "zzzzzz",
			Message: "unknown field; it is ignored", Fix: "remove it", UnknownField: true,
		}}},
		{"command ignored for http", `"x": {"type": "http", "url": "https://a", "command": "c"}`, []Diagnostic{{
			Severity: SeverityWarning, Position: at(5), Server: "x", Field: "command",
			Message: "ignored: an http server is reached by its url, not started",
			Fix:     `remove "command", or drop "type" for a local server`,
		}}},
		{"tools entry", `"x": {"command": "a", "tools": {"t": {"defer_loading": 1, "other": true}}}`, []Diagnostic{{
			Severity: SeverityError, Position: at(60), Server: "x", Field: "tools.t.defer_loading",
			Message: "must be true or false, not a number", Fix: `write "defer_loading": true or false`,
		}, {
			Severity: SeverityWarning, Position: at(63), Server: "x", Field: "tools.t.other",
			Message: "unknown field; it is ignored", Fix: `the only per-tool field is "defer_loading"`,
		}}},
		{"url with ${VAR} is checked later", `"x": {"url": "${MCP_URL}"}`, nil},
		{"duplicate field", `"x": {"command": "a", "command": "b"}`, []Diagnostic{{
			Severity: SeverityWarning, Position: at(27), Server: "x", Field: "command",
			Message: "field written more than once; the last one is used", Fix: "remove the duplicate",
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := "{\n  \"mcpServers\": {\n    " + tt.def + "\n  }\n}\n"
			servers, _, diags := ParseServers(f, []byte(data))
			if diff := cmp.Diff(tt.want, diags); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s", diff)
			}
			if len(servers) != 1 {
				t.Errorf("got %d servers, want the one definition even when invalid", len(servers))
			}
		})
	}
}

func TestParseServersDocument(t *testing.T) {
	const f = "c.json"
	tests := []struct {
		name, data string
		servers    []string
		want       []Diagnostic
	}{
		{"empty file", "  \n", nil, nil},
		{"no mcpServers", `{"other": 1}`, nil, nil},
		// A near miss of "mcpServers" is read as nothing: say so, or a
		// typo (or VS Code's "servers") gives "no servers" unexplained.
		{"mcpServers misspelt", "{\n  \"mcpservers\": {\"a\": {\"command\": \"x\"}}\n}", nil, []Diagnostic{{
			Severity: SeverityWarning, Position: Position{File: f, Line: 2, Col: 3}, Field: "mcpservers",
			Message: `is not read: servers go under "mcpServers"`, Fix: `rename "mcpservers" to "mcpServers"`,
		}}},
		{"VS Code's servers", `{"servers": {"a": {"command": "x"}}}`, nil, []Diagnostic{{
			Severity: SeverityWarning, Position: Position{File: f, Line: 1, Col: 2}, Field: "servers",
			Message: `is not read: servers go under "mcpServers"`, Fix: `rename "servers" to "mcpServers"`,
		}}},
		{"mcp_servers beside mcpServers", `{"mcpServers": {}, "mcp_servers": {"a": {"command": "x"}}}`, nil, []Diagnostic{{
			Severity: SeverityWarning, Position: Position{File: f, Line: 1, Col: 20}, Field: "mcp_servers",
			Message: `is not read: servers go under "mcpServers"`, Fix: `move its entries into "mcpServers"`,
		}}},
		// Profiles beside the servers are not read: --profile would say
		// only that the name is unknown.
		{"profiles in a servers file", `{"mcpServers": {"a": {"command": "x"}}, "profiles": {"r": {}}}`, []string{"a"}, []Diagnostic{{
			Severity: SeverityWarning, Position: Position{File: f, Line: 1, Col: 41}, Field: "profiles",
			Message: "is not read: profiles go in a settings file, not beside the servers",
			Fix:     `move "profiles" to ~/.switchboard/settings.json, or the repository's .switchboard/settings.json (docs/configuration.md, Profiles)`,
		}}},
		{"syntax error", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",,}\n  }\n}", nil, []Diagnostic{{
			Severity: SeverityError, Position: Position{File: f, Line: 3, Col: 26},
			Message: "invalid JSON: invalid character ',' at start of value", Fix: fixSyntax,
		}}},
		{"unterminated", `{"mcpServers": {"a": {"command": "x"`, nil, []Diagnostic{{
			Severity: SeverityError, Position: Position{File: f, Line: 1, Col: 37},
			Message: "invalid JSON: parsing object after value: unexpected EOF", Fix: fixSyntax,
		}}},
		{"line comment at end without newline", `{"mcpServers": {"a": {"command": "x"}}} // done`, []string{"a"}, nil},
		{"top level not an object", `[1]`, nil, []Diagnostic{{
			Severity: SeverityError, Position: Position{File: f, Line: 1, Col: 1},
			Message: "the top level must be a JSON object, not an array",
			Fix:     `wrap the content in { "mcpServers": { … } }`,
		}}},
		{"mcpServers not an object", `{"mcpServers": ["a"]}`, nil, []Diagnostic{{
			Severity: SeverityError, Position: Position{File: f, Line: 1, Col: 16}, Field: "mcpServers",
			Message: "must be an object mapping server names to definitions, not an array",
			Fix:     `write "mcpServers": { "name": { "command": "…" } }`,
		}}},
		{"duplicate server", "{\"mcpServers\": {\n\"a\": {\"command\": \"x\"},\n\"a\": {\"command\": \"y\"}}}", []string{"a"}, []Diagnostic{{
			Severity: SeverityWarning, Position: Position{File: f, Line: 2, Col: 1}, Server: "a",
			Message: "defined more than once in this file; the definition at line 3 is used",
			Fix:     "remove the duplicate entry",
		}}},
		{"bad server does not hide good one", `{"mcpServers": {"bad": {}, "good": {"command": "x"}}}`, []string{"bad", "good"}, []Diagnostic{{
			Severity: SeverityError, Position: Position{File: f, Line: 1, Col: 17}, Server: "bad",
			Message: `neither "command" nor "url" is set`,
			Fix:     `add "command" (and "args") for a local server, or "url" for a remote one`,
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			servers, _, diags := ParseServers(f, []byte(tt.data))
			if diff := cmp.Diff(tt.want, diags); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.servers, sortedKeys(servers), cmp.Comparer(func(a, b []string) bool {
				return strings.Join(a, ",") == strings.Join(b, ",")
			})); diff != "" {
				t.Errorf("server names (-want +got):\n%s", diff)
			}
		})
	}
	// The duplicate keeps the last definition, as JSON decoders do.
	servers, _, _ := ParseServers(f, []byte(`{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}`))
	if servers["a"].Command != "y" {
		t.Errorf("duplicate: got command %q, want the last one", servers["a"].Command)
	}
}

func TestParseServer(t *testing.T) {
	tests := []struct {
		name, server, raw string
		want              Server
		diags             []Diagnostic
	}{
		{"stdio", "fs", `{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem"]}`,
			Server{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem"}}, nil},
		{"jsonc", "h", "{ // remote\n \"type\": \"streamable-http\", \"url\": \"https://h/mcp\", }",
			Server{Type: TypeHTTP, URL: "https://h/mcp"}, nil},
		{"optional tools as tasks", "t", `{"command": "x", "tasks": "optional"}`,
			Server{Command: "x", Tasks: TasksOptional}, nil},
		{"bad name and no command", "a b", `  {}`, Server{}, []Diagnostic{{
			Severity: SeverityError, Position: Position{Line: 1, Col: 3}, Server: "a b",
			Message: "illegal server name: use 1 to 64 letters, digits, '_', '.' or '-'",
			Fix:     `rename the server, e.g. "a_b"`,
		}, {
			Severity: SeverityError, Position: Position{Line: 1, Col: 3}, Server: "a b",
			Message: `neither "command" nor "url" is set`,
			Fix:     `add "command" (and "args") for a local server, or "url" for a remote one`,
		}}},
		{"secret reference in args", "s", `{"command": "x", "args": ["${secret:TOK}"]}`,
			Server{Command: "x", Args: []string{"${secret:TOK}"}}, []Diagnostic{{
				Severity: SeverityError, Position: Position{Line: 1, Col: 1}, Server: "s", Field: "args",
				Message: "argument 1: ${secret:TOK} is expanded only in env values, header values and url",
				Fix:     `pass it to the server in env instead, e.g. "env": {"TOK": "${secret:TOK}"} (a command line is visible to every user of the machine)`,
			}}},
		{"malformed secret reference", "s", `{"command": "x", "env": {"A": "${secret:my key}"}}`,
			Server{Command: "x", Env: map[string]string{"A": "${secret:my key}"}}, []Diagnostic{{
				Severity: SeverityError, Position: Position{Line: 1, Col: 1}, Server: "s", Field: "env",
				Message: `the value of "A": "${secret:my key}" is not a secret reference: the name holds a space: a secret's name uses only letters, digits, '_', '.' and '-'`,
				Fix:     "write ${secret:NAME} with a name of letters, digits, '_', '.' and '-', or $${ for a literal ${",
			}}},
		{"not JSON", "x", `{"command": }`, Server{}, []Diagnostic{{
			Severity: SeverityError, Position: Position{Line: 1, Col: 13},
			Message: "invalid JSON: invalid character '}' at start of value", Fix: fixSyntax,
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, diags := ParseServer(tt.server, []byte(tt.raw))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("server (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.diags, diags); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDiagnosticError(t *testing.T) {
	_, _, diags := ParseServers("/p/.mcp.json", []byte("{\"mcpServers\": {\n  \"api\": {\"type\": \"http\"}}}"))
	if len(diags) != 1 {
		t.Fatalf("got %d diagnostics, want 1: %v", len(diags), diags)
	}
	want := `/p/.mcp.json:2:3: server "api": field "url": an http server needs a url (fix: add "url": "https://…")`
	if got := diags[0].Error(); got != want {
		t.Errorf("Error() =\n%s\nwant\n%s", got, want)
	}
}
