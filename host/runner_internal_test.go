package host

import "testing"

// npx's own arguments are told from its command's: "." after the package
// is the server's (server-filesystem's workspace), never a package path.
func TestLocalSpec(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-y", "@modelcontextprotocol/server-filesystem", "."}, ""},
		{[]string{"-y", "@modelcontextprotocol/server-memory"}, ""},
		{[]string{"-y", "./tools/server"}, "./tools/server"},
		{[]string{"--package=../pkg", "run-it"}, "../pkg"},
		{[]string{"-p", "file:vendor/x", "x", "."}, "file:vendor/x"},
		{[]string{"-p", "file:/opt/x", "x"}, ""},
		{[]string{"--yes", "--", ".", "a"}, "."},
		{[]string{"--yes", "--", "pkg", "."}, ""},
	} {
		if got := localSpec(tc.args); got != tc.want {
			t.Errorf("localSpec(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

func TestRunnerOf(t *testing.T) {
	for _, tc := range []struct {
		command string
		args    []string
		want    string
	}{
		{"npx", nil, "npm"},
		{"/usr/local/bin/npx", nil, "npm"},
		{`C:\Program Files\nodejs\npx.cmd`, nil, "npm"},
		{"npm", []string{"exec", "x"}, "npm"},
		{"npm", []string{"x", "x"}, "npm"},
		{"npm", []string{"run", "x"}, ""},
		{"bunx", nil, "bun"},
		{"bun", []string{"x", "y"}, "bun"},
		{"bun", []string{"server.ts"}, ""},
		{"pnpm", []string{"dlx", "y"}, "pnpm"},
		{"pnpx", nil, "pnpm"},
		{"yarn", []string{"dlx", "y"}, "yarn"},
		{"uv", []string{"run", "y"}, "uv"},
		{"uvx", nil, ""},
		{"python3", nil, "python"},
		{"python3.12", nil, "python"},
		{"pythonw", nil, ""},
		{"node", nil, ""},
	} {
		if got, _ := runnerOf(tc.command, tc.args); got != tc.want {
			t.Errorf("runnerOf(%q, %q) = %q, want %q", tc.command, tc.args, got, tc.want)
		}
	}
}
