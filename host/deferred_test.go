package host_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/toolsurface"
)

func boolp(b bool) *bool { return &b }

// names returns the names in a tool list, and whether tool_search is one.
func names(tools []host.Tool) map[string]bool {
	out := map[string]bool{}
	for _, t := range tools {
		out[t.Name] = true
	}
	return out
}

func countPrefix(set map[string]bool, prefix string) int {
	n := 0
	for k := range set {
		if strings.HasPrefix(k, prefix) {
			n++
		}
	}
	return n
}

func toolsOf(t *testing.T, h *host.Host) *host.ToolList {
	t.Helper()
	list, err := h.Tools(ctxFor(t, 30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Warnings) > 0 {
		t.Fatalf("warnings: %v", list.Warnings)
	}
	return list
}

func TestDeferredServerAndToolSearch(t *testing.T) {
	many := stdio("many", "many-tools", "-n", "300")
	many.Effective.DeferLoading = boolp(true)
	many.Effective.Tools = map[string]config.ToolConfig{"tool_0007": {DeferLoading: boolp(false)}}
	echo := stdio("echo", "echo")
	echo.Effective.Tools = map[string]config.ToolConfig{"big": {DeferLoading: boolp(true)}}
	h := newHost(t, cfgOf(many, echo), nil)

	list := toolsOf(t, h)
	visible := names(list.Tools)
	if n := countPrefix(visible, "mcp__many__"); n != 1 || !visible["mcp__many__tool_0007"] {
		t.Errorf("%d many tools visible, want only tool_0007 (its own defer_loading: false wins)", n)
	}
	if len(list.Deferred) != 300 { // 299 of many + echo's big
		t.Errorf("%d deferred tools, want 300", len(list.Deferred))
	}
	if visible["mcp__echo__big"] || !visible["mcp__echo__echo"] {
		t.Errorf("echo: big visible %v, echo visible %v; want big deferred by its own setting", visible["mcp__echo__big"], visible["mcp__echo__echo"])
	}
	if !visible[host.ToolSearchName] {
		t.Fatal("tool_search missing while tools are deferred")
	}
	for _, tl := range list.Tools {
		if tl.Name == host.ToolSearchName {
			if tl.Server != "" || !strings.Contains(tl.Tool.Description, "many") || !strings.Contains(tl.Tool.Description, "select:") {
				t.Errorf("tool_search = server %q, description %q", tl.Server, tl.Tool.Description)
			}
			if s := toolsurface.NormalizeSchema(tl.Tool.InputSchema); s["required"] == nil {
				t.Errorf("tool_search schema %v requires nothing", s)
			}
		}
	}

	// A search by exact name finds the tool first and loads it.
	res := mustCall(t, h, host.ToolSearchName, map[string]any{"query": "tool_0042", "limit": 3})
	if res.IsError {
		t.Fatalf("tool_search failed: %s", textOf(res))
	}
	lines := strings.Split(textOf(res), "\n")
	if len(lines) < 2 || !strings.Contains(lines[1], `"name":"mcp__many__tool_0042"`) || !strings.Contains(lines[1], `"input_schema"`) {
		t.Fatalf("tool_search result:\n%s", textOf(res))
	}
	var first map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &first); err != nil {
		t.Fatalf("hit line is not JSON: %v", err)
	}
	list = toolsOf(t, h)
	visible = names(list.Tools)
	if !visible["mcp__many__tool_0042"] {
		t.Fatal("the hit was not activated")
	}
	if got := textOf(mustCall(t, h, "mcp__many__tool_0042", map[string]any{"text": "hi"})); got != "tool_0042: hi" {
		t.Errorf("activated tool answered %q", got)
	}

	// Activation persists across a refetch of the list (list_changed, TTL).
	if err := h.Refresh("many"); err != nil {
		t.Fatal(err)
	}
	if visible := names(toolsOf(t, h).Tools); !visible["mcp__many__tool_0042"] || visible["mcp__many__tool_0043"] {
		t.Error("activation lost, or more than the hit loaded, after a refresh")
	}

	// Keywords from descriptions: every hit is about weather.
	res = mustCall(t, h, host.ToolSearchName, map[string]any{"query": "look up weather records", "limit": 5})
	hits := strings.Split(textOf(res), "\n")[1:]
	if len(hits) != 5 {
		t.Fatalf("%d hits, want 5:\n%s", len(hits), textOf(res))
	}
	for _, l := range hits {
		if !strings.Contains(l, "weather") {
			t.Errorf("hit without weather: %s", l)
		}
	}

	// select: loads exactly the named tools, deferred by any rule.
	res = mustCall(t, h, host.ToolSearchName, map[string]any{"query": "select:mcp__echo__big,mcp__many__tool_0300"})
	if visible := names(toolsOf(t, h).Tools); !visible["mcp__echo__big"] || !visible["mcp__many__tool_0300"] {
		t.Errorf("select did not load both tools:\n%s", textOf(res))
	}

	t.Run("bad arguments are a tool error", func(t *testing.T) {
		for _, args := range []any{nil, map[string]any{}, map[string]any{"query": 3}, json.RawMessage(`[1]`), map[string]any{"query": "  "}} {
			res := mustCall(t, h, host.ToolSearchName, args)
			if !res.IsError || !strings.Contains(textOf(res), `"query"`) {
				t.Errorf("args %v: isError %v, %q", args, res.IsError, textOf(res))
			}
		}
	})
	t.Run("no match says where deferred tools come from", func(t *testing.T) {
		res := mustCall(t, h, host.ToolSearchName, map[string]any{"query": "zzqx"})
		if res.IsError || !strings.Contains(textOf(res), "many (299)") {
			t.Errorf("isError %v, %q", res.IsError, textOf(res))
		}
	})
}

func TestToolModifiersBeatConfig(t *testing.T) {
	many := stdio("many", "many-tools", "-n", "20")
	many.Effective.DeferLoading = boolp(true)
	many.Effective.Tools = map[string]config.ToolConfig{"tool_0002": {DeferLoading: boolp(true)}}
	echo := stdio("echo", "echo")
	mods, err := toolsurface.ParseToolModifiers("default,Defer(mcp__echo__*),NoDefer(mcp__echo__add),NoDefer(mcp__many__tool_0001,mcp__many__tool_0002)")
	if err != nil {
		t.Fatal(err)
	}
	h := newHost(t, cfgOf(many, echo), &host.Options{ToolModifiers: mods})
	list := toolsOf(t, h)
	visible := names(list.Tools)
	for name, want := range map[string]bool{
		"mcp__echo__add":       true,  // NoDefer beats Defer(mcp__echo__*)
		"mcp__echo__echo":      false, // Defer beats the (absent) config
		"mcp__many__tool_0001": true,  // NoDefer beats the server's defer_loading
		"mcp__many__tool_0002": true,  // NoDefer beats the tool's own defer_loading
		"mcp__many__tool_0003": false,
		host.ToolSearchName:    true,
	} {
		if visible[name] != want {
			t.Errorf("%s visible = %v, want %v", name, visible[name], want)
		}
	}
	// A deferred tool can still be called by name: deferral changes the
	// list, not what may run.
	if got := textOf(mustCall(t, h, "mcp__echo__echo", map[string]any{"text": "x"})); got != "x" {
		t.Errorf("deferred echo answered %q", got)
	}
}

func TestAutoDefer(t *testing.T) {
	cfg := func() *config.Resolved { return cfgOf(stdio("many", "many-tools", "-n", "300"), stdio("echo", "echo")) }
	t.Run("a server over its share of the budget is deferred", func(t *testing.T) {
		h := newHost(t, cfg(), &host.Options{ContextBudget: 50_000, AutoDeferShare: 0.1})
		list := toolsOf(t, h)
		visible := names(list.Tools)
		if n := countPrefix(visible, "mcp__many__"); n != 0 {
			t.Errorf("%d many tools visible, want all deferred", n)
		}
		if !visible["mcp__echo__echo"] || !visible[host.ToolSearchName] || len(list.Deferred) != 300 {
			t.Errorf("echo visible %v, tool_search %v, %d deferred", visible["mcp__echo__echo"], visible[host.ToolSearchName], len(list.Deferred))
		}
		if st := statusOf(h, "many"); st.Tokens <= 5000 {
			t.Errorf("many's block is %d tokens, not over the 5000 threshold the test relies on", st.Tokens)
		}
	})
	t.Run("NoDefer and defer_loading false keep a big server", func(t *testing.T) {
		mods, _ := toolsurface.ParseToolModifiers("NoDefer(mcp__many__tool_0001)")
		c := cfg()
		c.Servers[1].Effective.DeferLoading = boolp(false) // echo: no effect, it is small
		h := newHost(t, c, &host.Options{ContextBudget: 50_000, ToolModifiers: mods})
		if visible := names(toolsOf(t, h).Tools); !visible["mcp__many__tool_0001"] || visible["mcp__many__tool_0002"] {
			t.Error("NoDefer did not keep tool_0001 alone loaded")
		}
		c = cfg()
		c.Servers[0].Effective.DeferLoading = boolp(false)
		h = newHost(t, c, &host.Options{ContextBudget: 50_000})
		if list := toolsOf(t, h); len(list.Deferred) != 0 {
			t.Errorf("%d deferred despite defer_loading: false", len(list.Deferred))
		}
	})
	t.Run("off, and the default budget keeps small servers", func(t *testing.T) {
		h := newHost(t, cfg(), &host.Options{ContextBudget: 50_000, AutoDeferShare: -1})
		list := toolsOf(t, h)
		if len(list.Deferred) != 0 || names(list.Tools)[host.ToolSearchName] {
			t.Errorf("auto mode off: %d deferred", len(list.Deferred))
		}
		res := mustCall(t, h, host.ToolSearchName, map[string]any{"query": "x"})
		if !res.IsError {
			t.Errorf("tool_search with nothing deferred: %q", textOf(res))
		}
		h = newHost(t, cfgOf(stdio("echo", "echo")), nil)
		if list := toolsOf(t, h); len(list.Deferred) != 0 {
			t.Errorf("default budget deferred %d echo tools", len(list.Deferred))
		}
	})
}

// TestDeferralTokenSaving measures what deferring a 100-tool server saves
// in the tool block (docs/benchmarks.md):
//
//	go test ./host -run TestDeferralTokenSaving -v
func TestDeferralTokenSaving(t *testing.T) {
	cost := func(opts *host.Options, deferLoading bool) int {
		s := stdio("many", "many-tools", "-n", "100")
		s.Effective.DeferLoading = boolp(deferLoading)
		h := newHost(t, cfgOf(s), opts)
		list := toolsOf(t, h)
		var defs []*mcp.Tool
		for _, tl := range list.Tools {
			d := *tl.Tool
			d.Name = tl.Name
			defs = append(defs, &d)
		}
		return toolsurface.ToolBlockTokens(defs)
	}
	without := cost(nil, false)
	with := cost(nil, true)
	t.Logf("100-tool server: tool block %d tokens loaded, %d tokens deferred (tool_search only): %.1f%% saved",
		without, with, 100*float64(without-with)/float64(without))
	if with >= without/10 {
		t.Errorf("deferred block %d tokens, want under a tenth of %d", with, without)
	}
}

// Concurrent searches and listings agree and race on nothing (run with
// -race): every search's hit ends up loaded.
func TestToolSearchConcurrent(t *testing.T) {
	many := stdio("many", "many-tools", "-n", "50")
	many.Effective.DeferLoading = boolp(true)
	h := newHost(t, cfgOf(many), nil)
	toolsOf(t, h)
	var wg sync.WaitGroup
	errs := make(chan string, 40)
	for i := 1; i <= 20; i++ {
		wg.Add(2)
		name := fmt.Sprintf("tool_%04d", i)
		go func() {
			defer wg.Done()
			res, err := h.Call(ctxFor(t, 30*time.Second), host.ToolSearchName, map[string]any{"query": name, "limit": 1})
			if err != nil || res.IsError || !strings.Contains(textOf(res), "mcp__many__"+name) {
				errs <- fmt.Sprintf("search %s: %v %s", name, err, textOf(res))
			}
		}()
		go func() {
			defer wg.Done()
			if _, err := h.Tools(ctxFor(t, 30*time.Second)); err != nil {
				errs <- err.Error()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	visible := names(toolsOf(t, h).Tools)
	if n := countPrefix(visible, "mcp__many__"); n != 20 {
		t.Errorf("%d many tools loaded after 20 searches, want 20", n)
	}
}
