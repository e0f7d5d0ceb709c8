package toolsurface

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var legalName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestSanitizePart(t *testing.T) {
	tests := []struct{ in, want string }{
		{"github", "github"},
		{"get_issue-2", "get_issue-2"},
		{"", "_"},
		{"a.b/c:d", "a_b_c_d"},
		{"日本語", "___"},
		{"café", "caf_"},
		{"a b\tc\n", "a_b_c_"},
		{"\xff\xfe", "__"},
		{"🙂", "_"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, SanitizePart(tt.in)); diff != "" {
				t.Errorf("SanitizePart(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestToolName(t *testing.T) {
	long := strings.Repeat("x", 1000)
	tests := []struct {
		name, server, tool, want string
	}{
		{"plain", "github", "get_issue", "mcp__github__get_issue"},
		{"illegal chars", "my.server", "files/read:all", "mcp__my_server__files_read_all"},
		{"only illegal", "日本", "???", "mcp" + strings.Repeat("_", 2+2+2+3)},
		{"empty tool", "s", "", "mcp__s___"},
		{"empty both", "", "", "mcp______"},
		{"exactly 64", "s", strings.Repeat("t", 64-len("mcp__s__")), "mcp__s__" + strings.Repeat("t", 56)},
		{"65 is cut", "s", strings.Repeat("t", 57),
			"mcp__s__" + strings.Repeat("t", 47) + "_" + shortHash("s", strings.Repeat("t", 57))},
		{"1000-char tool", "github", long,
			"mcp__github__" + strings.Repeat("x", 42) + "_" + shortHash("github", long)},
		{"1000-char server", long, "t", "mcp__" + strings.Repeat("x", 47) + "__t_" + shortHash(long, "t")},
		// The middle words go, the first and the last stay.
		{"words cut from the middle", "github", "get_repository_branch_protection_required_status_checks_contexts_v2",
			"mcp__github__get_repository_branch_checks_contexts_v2_" + shortHash("github", "get_repository_branch_protection_required_status_checks_contexts_v2")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ToolName(tt.server, tt.tool)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ToolName (-want +got):\n%s", diff)
			}
			if !legalName.MatchString(got) {
				t.Errorf("ToolName = %q, not a legal name", got)
			}
		})
	}
}

// Tools that differ only in their last words keep those words when their
// names are cut, behind a long server name too (issue 29: three gitlab tools
// all became create_merge_request_<hash>), for the model's names and a
// gateway's at every budget.
func TestCutNamesKeepWhatTellsToolsApart(t *testing.T) {
	tools := []string{"create_merge_request_note", "create_merge_request_thread", "create_merge_request_discussion"}
	for _, server := range []string{"gitlab", "gitlab-self-managed-production-eu", strings.Repeat("s", 40)} {
		for budget := MinNameBudget; budget <= MaxNameLen+1; budget++ {
			seen := map[string]string{}
			for _, tool := range tools {
				got := ServedName(server, tool, budget)
				if budget > MaxNameLen {
					got = ToolName(server, tool) // the model's own names, at 64
				}
				limit := min(budget, MaxNameLen)
				if len(got) > limit || !legalName.MatchString(got) {
					t.Errorf("%q: longer than %d or not legal", got, limit)
				}
				visible := got
				if cut := strings.HasSuffix(got, "_"+shortHash(server, tool)); cut {
					visible = strings.TrimSuffix(got, "_"+shortHash(server, tool))
					// From 40 bytes on, the whole distinguishing word shows.
					if last := tool[strings.LastIndexByte(tool, '_'):]; limit >= 40 && !strings.HasSuffix(visible, last) {
						t.Errorf("%s / %s (budget %d): %q lost its last word %q", server, tool, limit, got, last)
					}
				}
				if other, dup := seen[visible]; dup {
					t.Errorf("%s (budget %d): %q and %q both show as %q before the hash", server, limit, other, tool, visible)
				}
				seen[visible] = tool
			}
		}
	}
}

func TestToolNameLongNamesStayDistinct(t *testing.T) {
	a := ToolName("s", strings.Repeat("a", 100)+"1")
	b := ToolName("s", strings.Repeat("a", 100)+"2")
	if a == b {
		t.Fatalf("long names sharing a prefix collide: %q", a)
	}
	// The hash is of the unsanitized input, so these differ too even
	// though the sanitized prefixes are equal.
	c := ToolName("s", strings.Repeat("a", 100)+".")
	d := ToolName("s", strings.Repeat("a", 100)+"/")
	if c == d {
		t.Fatalf("long names differing after the cut collide: %q", c)
	}
	if got := ToolName("s", strings.Repeat("a", 100)+"1"); got != a {
		t.Fatalf("ToolName not deterministic: %q then %q", a, got)
	}
}

func TestParseToolName(t *testing.T) {
	type parsed struct {
		Server, Tool string
		OK           bool
	}
	tests := []struct {
		in   string
		want parsed
	}{
		{"mcp__github__get_issue", parsed{"github", "get_issue", true}},
		{"mcp__github__get__issue", parsed{"github", "get__issue", true}},
		{"mcp__my_server__t", parsed{"my_server", "t", true}},
		{"mcp__github", parsed{}},
		{"mcp__github__", parsed{}},
		{"mcp____t", parsed{}},
		{"bash", parsed{}},
		{"", parsed{}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			s, tool, ok := ParseToolName(tt.in)
			if diff := cmp.Diff(tt.want, parsed{s, tool, ok}); diff != "" {
				t.Errorf("ParseToolName(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestRouterAddResolve(t *testing.T) {
	r := NewRouter()
	if err := r.AddServer("github", []string{"get_issue", "list.issues"}); err != nil {
		t.Fatal(err)
	}
	if err := r.AddServer("fs", []string{"read"}); err != nil {
		t.Fatal(err)
	}
	type res struct {
		Server, Tool string
		OK           bool
	}
	tests := []struct {
		name string
		want res
	}{
		{"mcp__github__get_issue", res{"github", "get_issue", true}},
		{"mcp__github__list_issues", res{"github", "list.issues", true}},
		{"mcp__fs__read", res{"fs", "read", true}},
		{"mcp__fs__write", res{}},
		{"read", res{}},
	}
	for _, tt := range tests {
		s, tool, ok := r.Resolve(tt.name)
		if diff := cmp.Diff(tt.want, res{s, tool, ok}); diff != "" {
			t.Errorf("Resolve(%q) (-want +got):\n%s", tt.name, diff)
		}
	}
	if diff := cmp.Diff([]string{"mcp__github__get_issue", "mcp__github__list_issues"}, r.Names("github")); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	if name, ok := r.Name("github", "list.issues"); !ok || name != "mcp__github__list_issues" {
		t.Errorf("Name = %q, %v", name, ok)
	}
	if _, ok := r.Name("github", "list_issues"); ok {
		t.Errorf("Name found a tool the server does not have")
	}

	// Replacing a server's tools drops the old names.
	if err := r.AddServer("github", []string{"search"}); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := r.Resolve("mcp__github__get_issue"); ok {
		t.Errorf("old name still resolves after AddServer replaced the list")
	}
	r.RemoveServer("github")
	r.RemoveServer("github") // idempotent
	if _, _, ok := r.Resolve("mcp__github__search"); ok {
		t.Errorf("name resolves after RemoveServer")
	}
	if r.Names("github") != nil {
		t.Errorf("Names after RemoveServer = %v", r.Names("github"))
	}
}

func TestRouterCollisions(t *testing.T) {
	long := strings.Repeat("y", 1000)
	tests := []struct {
		name     string
		router   func() *Router
		existing map[string][]string
		server   string
		tools    []string
		want     *CollisionError
		wantMsg  string
	}{
		{
			name: "same tool twice", router: NewRouter,
			server: "s", tools: []string{"a", "b", "a"},
			want:    &CollisionError{Name: "mcp__s__a", Server: "s", Tool: "a", OtherServer: "s", OtherTool: "a"},
			wantMsg: `tool name collision: server "s" lists tool "a" more than once`,
		},
		{
			name: "equal after sanitizing", router: NewRouter,
			server: "s", tools: []string{"a.b", "a_b"},
			want:    &CollisionError{Name: "mcp__s__a_b", Server: "s", Tool: "a_b", OtherServer: "s", OtherTool: "a.b"},
			wantMsg: `tool name collision: server "s": tools "a.b" and "a_b" both become "mcp__s__a_b"`,
		},
		{
			name: "empty and underscore", router: NewRouter,
			server: "s", tools: []string{"", "_"},
			want: &CollisionError{Name: "mcp__s___", Server: "s", Tool: "_", OtherServer: "s", OtherTool: ""},
		},
		{
			name: "only illegal characters", router: NewRouter,
			server: "s", tools: []string{"日本", "中文"},
			want: &CollisionError{Name: "mcp__s____", Server: "s", Tool: "中文", OtherServer: "s", OtherTool: "日本"},
		},
		{
			name: "across servers", router: NewRouter,
			existing: map[string][]string{"a.b": {"x"}},
			server:   "a_b", tools: []string{"x"},
			want:    &CollisionError{Name: "mcp__a_b__x", Server: "a_b", Tool: "x", OtherServer: "a.b", OtherTool: "x"},
			wantMsg: `tool name collision: tool "x" of server "a.b" and tool "x" of server "a_b" both become "mcp__a_b__x"`,
		},
		{
			name: "double underscore ambiguity", router: NewRouter,
			existing: map[string][]string{"a__b": {"c"}},
			server:   "a", tools: []string{"b__c"},
			want: &CollisionError{Name: "mcp__a__b__c", Server: "a", Tool: "b__c", OtherServer: "a__b", OtherTool: "c"},
		},
		{
			name: "long names quoted short", router: NewRouter,
			server: "s", tools: []string{long, long},
			want: &CollisionError{Name: ToolName("s", long), Server: "s", Tool: long, OtherServer: "s", OtherTool: long},
			wantMsg: `tool name collision: server "s" lists tool "` + strings.Repeat("y", 80) +
				`…" more than once`,
		},
		{
			name: "bare: built-in", router: func() *Router { return BareRouter(nil) },
			server: "shell", tools: []string{"run", "Bash"},
			want:    &CollisionError{Name: "Bash", Server: "shell", Tool: "Bash", Reserved: "bash"},
			wantMsg: `tool name collision: tool "Bash" of server "shell" would shadow built-in tool "bash"`,
		},
		{
			name: "bare: built-in after sanitizing", router: func() *Router { return BareRouter([]string{"read_file"}) },
			server: "fs", tools: []string{"read.file"},
			want: &CollisionError{Name: "read_file", Server: "fs", Tool: "read.file", Reserved: "read_file"},
		},
		{
			name: "bare: across servers", router: func() *Router { return BareRouter(nil) },
			existing: map[string][]string{"gitlab": {"search_issues"}},
			server:   "github", tools: []string{"search_issues"},
			want: &CollisionError{Name: "search_issues", Server: "github", Tool: "search_issues", OtherServer: "gitlab", OtherTool: "search_issues"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.router()
			for s, tools := range tt.existing {
				if err := r.AddServer(s, tools); err != nil {
					t.Fatal(err)
				}
			}
			err := r.AddServer(tt.server, tt.tools)
			if !errors.Is(err, ErrCollision) {
				t.Fatalf("AddServer err = %v, want ErrCollision", err)
			}
			var ce *CollisionError
			if !errors.As(err, &ce) {
				t.Fatalf("AddServer err = %T, want *CollisionError", err)
			}
			if diff := cmp.Diff(tt.want, ce); diff != "" {
				t.Errorf("collision (-want +got):\n%s", diff)
			}
			if tt.wantMsg != "" {
				if diff := cmp.Diff(tt.wantMsg, err.Error()); diff != "" {
					t.Errorf("message (-want +got):\n%s", diff)
				}
			}
			// The failed server added nothing; the others are intact.
			if got := r.Names(tt.server); got != nil {
				t.Errorf("failed server still has names %v", got)
			}
			for _, tool := range tt.tools {
				if s, _, ok := r.Resolve(r.nameFor(tt.server, tool)); ok && s == tt.server {
					t.Errorf("failed server's tool %q resolves", tool)
				}
			}
			for s, tools := range tt.existing {
				for _, tool := range tools {
					if name, ok := r.Name(s, tool); !ok {
						t.Errorf("existing tool %s/%s lost (name %q)", s, tool, name)
					}
				}
			}
		})
	}
}

func TestRouterFailedRefreshDropsOldNames(t *testing.T) {
	r := NewRouter()
	if err := r.AddServer("s", []string{"a"}); err != nil {
		t.Fatal(err)
	}
	if err := r.AddServer("s", []string{"b", "b"}); err == nil {
		t.Fatal("want a collision")
	}
	if _, _, ok := r.Resolve("mcp__s__a"); ok {
		t.Error("a server in error must not stay routable under its old names")
	}
}

func TestBareRouterNames(t *testing.T) {
	r := BareRouter([]string{})
	long := strings.Repeat("z", 200)
	if err := r.AddServer("s", []string{"bash", "get.item", long}); err != nil {
		t.Fatal(err)
	}
	want := []string{"bash", "get_item", strings.Repeat("z", 55) + "_" + shortHash("s", long)}
	if diff := cmp.Diff(want, r.Names("s")); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	for _, n := range r.Names("s") {
		if !legalName.MatchString(n) {
			t.Errorf("illegal bare name %q", n)
		}
	}
	if s, tool, ok := r.Resolve("get_item"); !ok || s != "s" || tool != "get.item" {
		t.Errorf("Resolve(get_item) = %q %q %v", s, tool, ok)
	}
}

// TestRouterConcurrent is for -race: the runtime adds and removes servers
// while calls resolve names.
func TestRouterConcurrent(t *testing.T) {
	r := NewRouter()
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			server := string(rune('a' + g))
			for i := range 200 {
				_ = r.AddServer(server, []string{"t", "u"})
				r.Resolve(ToolName(server, "t"))
				r.Name(server, "u")
				r.Names(server)
				if i%3 == 0 {
					r.RemoveServer(server)
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
}
