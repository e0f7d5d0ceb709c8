package policy

import "testing"

func TestExactRule(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  Request
		want string
	}{
		{"server and tool", call("echo", "side_effect"), "mcp__echo__side_effect"},
		{"own spelling kept", Request{Tool: "mcp__My-Srv__Get_Me", Server: "My-Srv", ToolName: "Get_Me"}, "mcp__My-Srv__Get_Me"},
		{"a tool name rules cannot hold: the shown name", Request{Tool: "mcp__fs__read_file_", Server: "fs", ToolName: "read/file?"}, "mcp__fs__read_file_"},
		{"a tool holding __ is still one tool of the server", call("a", "b__c"), "mcp__a__b__c"},
		{"only the full name", Request{Tool: "mcp__echo__echo"}, "mcp__echo__echo"},
		{"no name", Request{}, ""},
		{"not an MCP tool", Request{Tool: "Bash"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ExactRule(tc.req)
			if got != tc.want {
				t.Fatalf("ExactRule = %q, want %q", got, tc.want)
			}
			if got == "" {
				return
			}
			// The rule allows the tool, also when it declares itself
			// destructive, and no other tool of the server.
			req := tc.req
			req.Annotations.DestructiveHint = true
			p := New(NewRule(Allow, got, userSrc))
			if d := p.Decide(req); d.Action != Allow {
				t.Errorf("%s does not allow its own tool: %+v", got, d)
			}
			if d := p.Decide(Request{Server: req.Server + "x", ToolName: "other"}); d.Action == Allow {
				t.Errorf("%s allows another tool", got)
			}
		})
	}
}

func TestCheckRule(t *testing.T) {
	for _, tc := range []struct {
		list Action
		text string
		ok   bool
	}{
		{Allow, "mcp__echo__echo", true},
		{Allow, "mcp__echo", true},
		{Allow, "mcp__echo__*", true},
		{Allow, `mcp__fs__write_file(path:"/tmp/**")`, true},
		{Deny, "mcp__*", true},
		{Ask, "mcp__*", true},
		{Allow, "mcp__*", false},
		{Allow, "mcp__git*", false},
		{Deny, "mcp__github__get_*", false},
		{Allow, "*", false},
		{Allow, "Bash", false},
		{Allow, `mcp__fs__write_file(path:/tmp)`, false},
		{Allow, `mcp__fs__write_file(path:"/tmp"`, false},
		{Allow, "", false},
		{Allow, " mcp__echo", false},
		{Action("maybe"), "mcp__echo", false},
		{Allow, "mcp__a__b__*", false},
	} {
		problem, fix := CheckRule(tc.list, tc.text)
		if (problem == "") != tc.ok {
			t.Errorf("CheckRule(%s, %q) = %q; want ok=%v", tc.list, tc.text, problem, tc.ok)
		}
		if problem != "" && fix == "" && tc.text != "mcp__a__b__*" {
			t.Errorf("CheckRule(%s, %q): no fix", tc.list, tc.text)
		}
	}
}
