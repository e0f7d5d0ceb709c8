package cli

import (
	"strings"
	"testing"
)

// In project scope an imported definition holds no path of this machine:
// the editor's workspace becomes a path relative to where the server
// starts, its home ${HOME}; what cannot be said so is skipped.
func TestSharedImport(t *testing.T) {
	f := &Factory{HomeDir: "/home/me"}
	tests := []struct {
		name, in, want, skip string
	}{
		{"no paths", `{"command":"x","args":["a"],"env":{"T":"${env:TOKEN}"}}`, `{"command":"x","args":["a"],"env":{"T":"${TOKEN}"}}`, ""},
		{"workspace and home", `{"command":"x","args":["${workspaceFolder}","${workspaceFolder}/a","--h=${userHome}/n"],"env":{"D":"${workspaceRoot}/d"}}`,
			`{"command":"x","args":[".","./a","--h=${HOME}/n"],"env":{"D":"./d"},"cwd":"."}`, ""},
		{"home only adds no cwd", `{"command":"${userHome}/bin/x"}`, `{"command":"${HOME}/bin/x"}`, ""},
		{"relative to a cwd below", `{"command":"${workspaceFolder}/bin/x","cwd":"${workspaceFolder}/sub/dir","args":["${workspaceFolder}"]}`,
			`{"command":"../../bin/x","cwd":"./sub/dir","args":["../.."]}`, ""},
		{"cwd is the workspace", `{"command":"x","cwd":"${workspaceFolder}","args":["${workspaceFolder}/a"]}`,
			`{"command":"x","cwd":".","args":["./a"]}`, ""},
		{"home in a url", `{"url":"https://x/${userHome}"}`, `{"url":"https://x/${HOME}"}`, ""},
		{"workspace in a url", `{"url":"https://x/?root=${workspaceFolder}"}`, "", "uses ${workspaceFolder} in its url"},
		{"workspace in a header", `{"url":"https://x","headers":{"Root":"${workspaceFolder}"}}`, "", "uses ${workspaceFolder} in its headers"},
		{"cwd outside", `{"command":"x","cwd":"/opt/srv","args":["${workspaceFolder}"]}`, "", "with a cwd that is not inside the workspace"},
		{"cwd above", `{"command":"x","cwd":"${workspaceFolder}/..","args":["${workspaceFolder}"]}`, "", "with a cwd that is not inside the workspace"},
		{"home as cwd", `{"command":"x","cwd":"${userHome}"}`, "", "uses ${userHome} in its cwd"},
		{"input in env a secret", `{"command":"x","args":["${workspaceFolder}"],"env":{"K":"${input:key}"}}`, `{"command":"x","args":["."],"env":{"K":"${secret:key}"},"cwd":"."}`, ""},
		// A path of this machine written out is read as the variable.
		{"literal workspace and home", `{"command":"/home/me/bin/x","args":["/w s/data","--out=/w s","/w sx","/home/meat"],"cwd":"/w s/sub","env":{"P":"/home/me"}}`,
			`{"command":"${HOME}/bin/x","args":["../data","--out=..","/w sx","/home/meat"],"cwd":"./sub","env":{"P":"${HOME}"}}`, ""},
		{"literal home as cwd", `{"command":"x","cwd":"/home/me"}`, "", "were read as ${workspaceFolder} and ${userHome}, and it uses ${userHome} in its cwd"},
		{"input in args still skipped", `{"command":"x","args":["${workspaceFolder}","${input:key}"]}`, "", "uses ${input:key}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, notes, skip := sharedImport(f, []byte(tt.in), "/w s")
			if tt.skip != "" {
				if !strings.Contains(skip, tt.skip) {
					t.Errorf("skip = %q, want %q", skip, tt.skip)
				}
				return
			}
			if skip != "" || string(got) != tt.want {
				t.Errorf("sharedImport = %s (skip %q), want %s", got, skip, tt.want)
			}
			if strings.Contains(strings.ReplaceAll(string(got), "/w sx", ""), "/w s") || strings.Contains(strings.ReplaceAll(string(got), "/home/meat", ""), "/home/me") {
				t.Errorf("a path of this machine reached the shared file: %s", got)
			}
			if joined := strings.Join(notes, "\n"); strings.Contains(string(got), "${HOME}") != strings.Contains(joined, "${HOME}") {
				t.Errorf("notes %q do not say what became of ${userHome}", notes)
			}
		})
	}
}
