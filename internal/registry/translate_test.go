package registry

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/config"
)

func mustPlan(t *testing.T, js string, sel Selection) *Plan {
	t.Helper()
	var s ServerJSON
	if err := json.Unmarshal([]byte(js), &s); err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan(&s, sel)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBuild(t *testing.T) {
	tests := []struct {
		name   string
		js     string
		sel    Selection
		opts   *BuildOptions
		want   *Definition
		errMsg string
	}{{
		name: "npm adds -y and pins the version",
		js:   `{"name":"a/b","packages":[{"registryType":"npm","identifier":"@x/y","version":"1.2.3","transport":{"type":"stdio"},"packageArguments":[{"type":"positional","value":"serve"},{"type":"named","name":"--port","default":"80"}]}]}`,
		want: &Definition{Type: "stdio", Command: "npx", Args: []string{"-y", "@x/y@1.2.3", "serve", "--port", "80"}},
	}, {
		name: "pypi with uvx, secret env given in user scope",
		js:   `{"name":"a/b","packages":[{"registryType":"pypi","identifier":"w","version":"0.5","runtimeHint":"uvx","transport":{"type":"stdio"},"environmentVariables":[{"name":"KEY","isRequired":true,"isSecret":true},{"name":"UNITS","default":"c"}]}]}`,
		opts: &BuildOptions{Values: map[string]string{"KEY": "s3cret"}},
		want: &Definition{Type: "stdio", Command: "uvx", Args: []string{"w==0.5"}, Env: map[string]string{"KEY": "s3cret", "UNITS": "c"}},
	}, {
		name: "secret becomes a reference in project scope",
		js:   `{"name":"a/b","packages":[{"registryType":"pypi","identifier":"w","version":"0.5","transport":{"type":"stdio"},"environmentVariables":[{"name":"KEY","isRequired":true,"isSecret":true}]}]}`,
		opts: &BuildOptions{Values: map[string]string{"KEY": "s3cret"}, SecretRefs: true},
		want: &Definition{Type: "stdio", Command: "uvx", Args: []string{"w==0.5"}, Env: map[string]string{"KEY": "${KEY}"}},
	}, {
		name: "oci passes env names to the container",
		js:   `{"name":"a/b","packages":[{"registryType":"oci","identifier":"docker.io/mcp/fs:1","transport":{"type":"stdio"},"runtimeArguments":[{"type":"named","name":"--mount","value":"type=bind,src={src},dst=/p","variables":{"src":{"isRequired":true}}}],"environmentVariables":[{"name":"LOG","default":"info"}]}]}`,
		opts: &BuildOptions{Values: map[string]string{"src": "/home/me"}},
		want: &Definition{Type: "stdio", Command: "docker", Args: []string{"run", "-i", "--rm", "-e", "LOG", "--mount", "type=bind,src=/home/me,dst=/p", "docker.io/mcp/fs:1"}, Env: map[string]string{"LOG": "info"},
			RuntimeArgs: []string{"--mount", "type=bind,src=/home/me,dst=/p"}},
	}, {
		name: "nuget with dnx",
		js:   `{"name":"a/b","packages":[{"registryType":"nuget","identifier":"K.S","version":"0.4.0-beta","transport":{"type":"stdio"},"packageArguments":[{"type":"positional","value":"mcp"},{"type":"positional","value":"start"}]}]}`,
		want: &Definition{Type: "stdio", Command: "dnx", Args: []string{"K.S@0.4.0-beta", "--yes", "--", "mcp", "start"}},
	}, {
		name: "remote with a templated URL and a secret header",
		js:   `{"name":"a/b","remotes":[{"type":"sse","url":"https://{tenant}.example.com/sse","variables":{"tenant":{"isRequired":true}},"headers":[{"name":"Authorization","value":"Bearer {tok}","variables":{"tok":{"isRequired":true,"isSecret":true}}}]}]}`,
		opts: &BuildOptions{Values: map[string]string{"tenant": "acme", "tok": "t0k"}, SecretRefs: true},
		want: &Definition{Type: "sse", URL: "https://acme.example.com/sse", Headers: map[string]string{"Authorization": "Bearer ${TOK}"}},
	}, {
		name: "a secret kept in the user's store is a secret reference",
		js:   `{"name":"a/b","remotes":[{"type":"streamable-http","url":"https://x.example.com/mcp","headers":[{"name":"Authorization","value":"Bearer {tok}","variables":{"tok":{"isRequired":true,"isSecret":true}}}]}]}`,
		opts: &BuildOptions{Values: map[string]string{"tok": "t0k"}, SecretRefs: true, Stored: map[string]string{"tok": "TOK_2"}},
		want: &Definition{Type: "http", URL: "https://x.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer ${secret:TOK_2}"}},
	}, {
		name: "publisher text cannot read the environment",
		js:   `{"name":"a/b","packages":[{"registryType":"npm","identifier":"x","transport":{"type":"stdio"},"packageArguments":[{"type":"positional","value":"${HOME}"},{"type":"positional","valueHint":"d","default":"$${AWS_SECRET}"}]}]}`,
		want: &Definition{Type: "stdio", Command: "npx", Args: []string{"-y", "x", "$${HOME}", "$$${AWS_SECRET}"}},
	}, {
		name:   "missing required values are listed",
		js:     `{"name":"a/b","packages":[{"registryType":"npm","identifier":"x","transport":{"type":"stdio"},"environmentVariables":[{"name":"A","isRequired":true},{"name":"B","isRequired":true,"isSecret":true}]}]}`,
		errMsg: "missing required values: A, B",
	}, {
		name:   "choices are checked",
		js:     `{"name":"a/b","packages":[{"registryType":"npm","identifier":"x","transport":{"type":"stdio"},"environmentVariables":[{"name":"R","choices":["eu","us"]}]}]}`,
		opts:   &BuildOptions{Values: map[string]string{"R": "mars"}},
		errMsg: `R: "mars" is not one of eu, us`,
	}, {
		name: "remote picked by transport",
		js:   `{"name":"a/b","packages":[{"registryType":"npm","identifier":"x","transport":{"type":"stdio"}}],"remotes":[{"type":"streamable-http","url":"https://e.com/mcp"}]}`,
		sel:  Selection{Transport: "streamable-http"},
		want: &Definition{Type: "http", URL: "https://e.com/mcp"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustPlan(t, tt.js, tt.sel)
			got, err := p.Build(tt.opts)
			if tt.errMsg != "" {
				if err == nil || err.Error() != tt.errMsg {
					t.Fatalf("err = %v, want %q", err, tt.errMsg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("definition (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewPlanUnsupported(t *testing.T) {
	for _, js := range []string{
		`{"name":"a/b","packages":[{"registryType":"mcpb","identifier":"https://x/y.mcpb","transport":{"type":"stdio"}}]}`,
		`{"name":"a/b","packages":[{"registryType":"npm","identifier":"x","runtimeHint":"bash","transport":{"type":"stdio"}}]}`,
		`{"name":"a/b","packages":[{"registryType":"npm","identifier":"x","transport":{"type":"streamable-http","url":"http://localhost:3000/mcp"}}]}`,
		`{"name":"a/b"}`,
	} {
		var s ServerJSON
		if err := json.Unmarshal([]byte(js), &s); err != nil {
			t.Fatal(err)
		}
		if _, err := NewPlan(&s, Selection{}); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: err = %v, want ErrUnsupported", js, err)
		}
	}
}

// FuzzTranslate checks, for any server.json, that translating it never
// panics, and that the definition it gives reads no environment variable
// but the references Switchboard wrote for secrets: whatever text a
// publisher puts in a server.json, expanding the definition (as the
// loader does at start) takes nothing from the user's environment.
func FuzzTranslate(f *testing.F) {
	f.Add(`{"name":"a/b","packages":[{"registryType":"npm","identifier":"@x/y","version":"1","transport":{"type":"stdio"},"environmentVariables":[{"name":"K","isRequired":true,"isSecret":true},{"name":"L","default":"${HOME}"}],"packageArguments":[{"type":"positional","value":"a{v}$","variables":{"v":{"default":"${X:-$${Y}}"}}}]}]}`, false)
	f.Add(`{"name":"a/b","remotes":[{"type":"sse","url":"https://{t}.e.com/${HOME}","variables":{"t":{"isRequired":true,"isSecret":true}},"headers":[{"name":"A","value":"B {t} $${C}"}]}]}`, true)
	f.Add(`{"name":"a/b","packages":[{"registryType":"oci","identifier":"i","transport":{"type":"stdio"},"runtimeArguments":[{"type":"named","name":"--m","value":"{a}{b}","variables":{"a":{"default":"$"},"b":{"default":"{HOME}"}}}]}]}`, true)
	f.Fuzz(func(t *testing.T, js string, pkg bool) {
		var s ServerJSON
		if json.Unmarshal([]byte(js), &s) != nil {
			return
		}
		sel := Selection{Kind: "remote"}
		if pkg {
			sel.Kind = "package"
		}
		p, err := NewPlan(&s, sel)
		if err != nil {
			return
		}
		refs := map[string]bool{}
		for _, v := range p.Inputs {
			if v.Secret {
				refs[v.Ref] = true
			}
		}
		def, err := p.Build(&BuildOptions{SecretRefs: true})
		var missing *MissingError
		if errors.As(err, &missing) {
			// Give every missing value as plain text; a secret still becomes
			// its reference.
			vals := map[string]string{}
			for _, v := range missing.Vars {
				vals[v.Key] = "v"
			}
			def, err = p.Build(&BuildOptions{Values: vals, SecretRefs: true})
		}
		if err != nil {
			return
		}
		lookup := func(name string) (string, bool) {
			if refs[name] {
				return "", true
			}
			return "LEAKED", true
		}
		check := func(where, s string) {
			if out, _ := config.Expand(s, lookup); strings.Contains(out, "LEAKED") && !strings.Contains(s, "LEAKED") {
				t.Fatalf("%s %q expands to %q: it reads the environment", where, s, out)
			}
		}
		check("command", def.Command)
		for _, a := range def.Args {
			check("arg", a)
		}
		for k, v := range def.Env {
			check("env "+k, v)
		}
		check("url", def.URL)
		for k, v := range def.Headers {
			check("header "+k, v)
		}
		raw, err := json.Marshal(def)
		if err != nil {
			t.Fatal(err)
		}
		// Whatever the loader thinks of it, it must parse without a panic.
		config.ParseServer("x", raw)
	})
}
