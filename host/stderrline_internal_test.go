package host

import (
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
)

// The reason a server died is the line that names the error, not the
// runtime's banner or punctuation after it.
func TestReasonLine(t *testing.T) {
	for _, tc := range []struct {
		name, stderr, want string
	}{
		{"node, missing module", `node:internal/modules/cjs/loader:1228
  throw err;
  ^

Error: Cannot find module '/tmp/does-not-exist.js'
    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)
    at node:internal/main/run_main_module:28:49 {
  code: 'MODULE_NOT_FOUND',
  requireStack: []
}

Node.js v20.20.2`, "Error: Cannot find module '/tmp/does-not-exist.js'"},
		{"node, type error", "file:///srv/index.js:3\nfoo.bar();\n    ^\n\nTypeError: foo.bar is not a function\n    at file:///srv/index.js:3:5\n\nNode.js v20.20.2", "TypeError: foo.bar is not a function"},
		{"node ESM", "node:internal/errors:496\n    ErrorCaptureStackTrace(err);\n    ^\n\nError [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod'\n    at new NodeError (node:internal/errors:405:5) {\n  code: 'ERR_MODULE_NOT_FOUND'\n}\n\nNode.js v20.20.2", "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod'"},
		{"npx, a copy a download cut short", "node:internal/modules/esm/resolve:854\n  throw new ERR_MODULE_NOT_FOUND(packageName, fileURLToPath(base), null);\n        ^\n\nError [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod' imported from /home/u/.npm/_npx/15b07286cbcc3329/node_modules/@modelcontextprotocol/server-memory/dist/index.js\n    at packageResolve (node:internal/modules/esm/resolve:854:9) {\n  code: 'ERR_MODULE_NOT_FOUND'\n}\n\nNode.js v20.20.2",
			"Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod' imported from /home/u/.npm/_npx/15b07286cbcc3329/node_modules/@modelcontextprotocol/server-memory/dist/index.js — npx's copy of the server's packages in /home/u/.npm/_npx/15b07286cbcc3329 is incomplete (an earlier download was cut short): delete that folder and start the server again"},
		{"python", "Traceback (most recent call last):\n  File \"/srv/server.py\", line 1, in <module>\n    import mcp\nModuleNotFoundError: No module named 'mcp'", "ModuleNotFoundError: No module named 'mcp'"},
		{"go panic", "panic: listen: address in use\n\ngoroutine 1 [running]:\nmain.main()\n\t/src/main.go:12 +0x1d\nexit status 2", "panic: listen: address in use"},
		{"plain last line", "starting\nGITHUB_TOKEN is not set", "GITHUB_TOKEN is not set"},
		{"banner only", "Node.js v20.20.2\n}\n", ""},
		{"an old error, then the fatal line", "error: telemetry endpoint unreachable, continuing without it\nserving on stdio\n2026/11/30 03:00:00 open /data/index.db: permission denied", "2026/11/30 03:00:00 open /data/index.db: permission denied"},
		{"a timestamped error last", "starting\n2026-11-30T03:00:00Z ERROR: cannot bind port 8080", "2026-11-30T03:00:00Z ERROR: cannot bind port 8080"},
		{"an error, then a line of the server", "Error: retrying in 5s\nlistening", "listening"},
		{"go run's exit status", "serving on stdio\n2026/11/30 03:00:00 open /data/index.db: permission denied\nexit status 1", "2026/11/30 03:00:00 open /data/index.db: permission denied"},
		{"rust panic", "thread 'main' panicked at src/main.rs:4:5:\nno config file\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace", "no config file"},
		{"empty", "", ""},
		// npx of a package npm cannot get: the block ends with where npm's
		// log is; the reason is npm's own sentence (output of npm 10.9).
		{"npx, a misspelt package", `npm error code E404
npm error 404 Not Found - GET https://registry.npmjs.org/@modelcontextprotocol%2fserver-everythin
npm error 404
npm error 404  The requested resource '@modelcontextprotocol/server-everythin@*' could not be found or you do not have permission to access it.
npm error 404
npm error 404 Note that you can also install from a
npm error 404 tarball, folder, http url, or git url.
npm error A complete log of this run can be found in: /home/u/.npm/_logs/2026-12-07T04_55_46_721Z-debug-0.log`,
			"npm error 404 The requested resource '@modelcontextprotocol/server-everythin@*' could not be found or you do not have permission to access it."},
		{"npx, a version that does not exist", `npm error code ETARGET
npm error notarget No matching version found for @modelcontextprotocol/server-everything@9.9.9.
npm error notarget In most cases you or one of your dependencies are requesting a package version that doesn't exist.
npm error A complete log of this run can be found in: /home/u/.npm/_logs/2026-12-07T04_58_12_427Z-debug-0.log`,
			"npm error notarget No matching version found for @modelcontextprotocol/server-everything@9.9.9."},
		{"npx, no registry", `npm error code ECONNREFUSED
npm error syscall connect
npm error errno ECONNREFUSED
npm error FetchError: request to http://127.0.0.1:9/left-pad-zz failed, reason: connect ECONNREFUSED 127.0.0.1:9
npm error     at ClientRequest.<anonymous> (/usr/lib/node_modules/npm/node_modules/minipass-fetch/lib/index.js:130:14)
npm error     at process.processTicksAndRejections (node:internal/process/task_queues:83:21) {
npm error   code: 'ECONNREFUSED',
npm error   type: 'system'
npm error }
npm error
npm error If you are behind a proxy, please make sure that the 'proxy' config is set properly.  See: 'npm help config'
npm error A complete log of this run can be found in: /home/u/.npm/_logs/2026-12-07T04_57_01_049Z-debug-0.log`,
			"npm error FetchError: request to http://127.0.0.1:9/left-pad-zz failed, reason: connect ECONNREFUSED 127.0.0.1:9"},
		{"npm ERR! of npm 6", "npm ERR! code E404\nnpm ERR! 404 Not Found - GET https://registry.npmjs.org/nope-zz - Not found\nnpm ERR! 404 \nnpm ERR! 404  'nope-zz@latest' is not in the npm registry.\nnpm ERR! A complete log of this run can be found in:\nnpm ERR!     /home/u/.npm/_logs/debug.log",
			"npm ERR! 404 'nope-zz@latest' is not in the npm registry."},
		{"npm warnings, then the server's own error", "npm warn deprecated x@1\nError: GITHUB_TOKEN is not set", "Error: GITHUB_TOKEN is not set"},
		{"an error, then the usage text", "error: required option '--api-key <key>' not specified\nUsage: server [options]\n\nOptions:\n  --api-key <key>  the key\n  -h, --help       display help for command", "error: required option '--api-key <key>' not specified"},
		{"argparse: usage, then the error", "usage: server.py [-h] --token TOKEN\nserver.py: error: the following arguments are required: --token", "server.py: error: the following arguments are required: --token"},
		{"go flag package", "flag provided but not defined: -prot\nUsage of /srv/server:\n  -port int\n    \tport to listen on (default 8080)", "flag provided but not defined: -prot"},
		{"usage only", "Usage: server --token TOKEN\n  --token  the API token", "Usage: server --token TOKEN"},
		{"a stack of errors: the first is the cause", "Error: connect ECONNREFUSED 127.0.0.1:5432\n    at TCPConnectWrap.afterConnect\nError: database unavailable\n    at main (/srv/index.js:9:3)\n\nNode.js v20.20.2", "Error: connect ECONNREFUSED 127.0.0.1:5432"},
		{"node, missing module from a script (Require stack)", `node:internal/modules/cjs/loader:1210
  throw err;
  ^

Error: Cannot find module 'left-pad'
Require stack:
- /srv/index.js
- /srv/main.js
    at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)
    at Function.executeUserEntryPoint [as runMain] (node:internal/modules/run_main:164:12) {
  code: 'MODULE_NOT_FOUND',
  requireStack: [ '/srv/index.js', '/srv/main.js' ]
}

Node.js v20.20.2`, "Error: Cannot find module 'left-pad'"},
		{"cobra: the error, then a usage text of 300 lines", "Error: unknown flag: --bogus\nUsage:\n  kubernetes-mcp-server [command] [flags]\n\nFlags:\n" +
			strings.Repeat("      --flag string   what it does (default \"x\")\n", 300) +
			"\nUse \"kubernetes-mcp-server [command] --help\" for more information about a command.",
			"Error: unknown flag: --bogus"},
		{"go flag: the error, then a usage text of 300 lines", "flag provided but not defined: -bogus\nUsage of mcp-grafana:\n" +
			strings.Repeat("  -flag string\n    \twhat it does\n", 150), "flag provided but not defined: -bogus"},
		{"a tail that begins inside a usage text", "      --port int   the port\n      --token string   the token\n\nGlobal Flags:\n  -v, --verbose   say more\n\n" +
			"Use \"srv [command] --help\" for more information about a command.", ""},
		{"commander: usage cut before its first line, closing pointer last", "  -h, --help  display help\nCommands:\n  serve  run it\nFor more information, try '--help'.", ""},
		{"clap: the error, a tip, then usage", "error: unexpected argument '--bogus' found\n\n  tip: to pass '--bogus' as a value, use '-- --bogus'\n\nUsage: srv [OPTIONS]\n\nFor more information, try '--help'.",
			"error: unexpected argument '--bogus' found"},
		{"a server that logs its options, then dies", "Options: verbose\nconnecting to the index\nindex not found", "index not found"},
		{"an error, then a hint", "error: cannot open database\nhint: fix it", "error: cannot open database"},
		{"an error, then a plea", "Error: cannot open database\nTry again later", "Error: cannot open database"},
		{"an error, then advice on two lines", "starting\nfatal: no config file\nPlease set CONFIG_PATH.\nSee https://example.com/docs for more.", "fatal: no config file"},
		{"a nested gateway's refusal", "error: this is a Switchboard gateway started as an upstream server of the gateway with process id 123 ($SWITCHBOARD_GATEWAY); a gateway never serves itself\nhint: take the gateway's entry out of the servers Switchboard reads, or run it only from the client",
			"error: this is a Switchboard gateway started as an upstream server of the gateway with process id 123 ($SWITCHBOARD_GATEWAY); a gateway never serves itself"},
		{"advice alone", "starting\nhint: set GITHUB_TOKEN", "hint: set GITHUB_TOKEN"},
		{"an error, then the server's line, then advice", "Error: retrying in 5s\nlistening\nTry again later", "Try again later"},
	} {
		if got := reasonLine(strings.Split(tc.stderr, "\n")); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// Whatever a server writes, the reason is one of its lines, trimmed, or
// nothing.
func FuzzReasonLine(f *testing.F) {
	f.Add("Error: x\nNode.js v20\n}")
	f.Add("panic: y\n\tat z")
	f.Add("  ^  \n\n")
	f.Fuzz(func(t *testing.T, s string) {
		lines := strings.Split(s, "\n")
		got := reasonLine(lines)
		if got == "" {
			return
		}
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.TrimSpace(l) == got }) {
			t.Fatalf("reason %q is none of the lines %q", got, lines)
		}
	})
}

// A database URL in a server's arguments, also when it came from an
// environment variable whose name says nothing, keeps its password out of
// status (review 15).
func TestStatusCommandHidesADatabasePassword(t *testing.T) {
	environ := []string{"DATABASE_URL=postgresql://app:Pa$$w0rd&1@db.internal:5432/prod", "HOME=/home/u"}
	def := config.Server{Type: config.TypeStdio, Command: "npx",
		Args: []string{"-y", "@modelcontextprotocol/server-postgres", "postgresql://app:Pa$$w0rd&1@db.internal:5432/prod"}}
	if got := shownCommandLine(config.ResolvedServer{Effective: def}, knownSecrets(nil, environ)); strings.Contains(got, "Pa$$w0rd") || !strings.Contains(got, "server-postgres") {
		t.Errorf("status command: %s", got)
	}
}
