package search

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/toolsurface"
)

// corpusServer is one server of testdata/search_corpus.json: realistic
// tools of well-known MCP servers (names, descriptions and argument
// schemas written after the real ones).
type corpusServer struct {
	Server string      `json:"server"`
	Tools  []*mcp.Tool `json:"tools"`
}

func loadCorpus(t testing.TB) []Doc {
	t.Helper()
	b, err := os.ReadFile("testdata/search_corpus.json")
	if err != nil {
		t.Fatal(err)
	}
	var servers []corpusServer
	if err := json.Unmarshal(b, &servers); err != nil {
		t.Fatal(err)
	}
	var docs []Doc
	for _, s := range servers {
		for _, tool := range s.Tools {
			docs = append(docs, DocFor(toolsurface.ToolName(s.Server, tool.Name), s.Server, tool))
		}
	}
	return docs
}

func TestSearchDump(t *testing.T) {
	if os.Getenv("DUMP") == "" {
		t.Skip()
	}
	ix := NewIndex(loadCorpus(t))
	for _, q := range strings.Split(os.Getenv("DUMP"), ";") {
		fmt.Printf("%q:\n", q)
		for _, h := range ix.Search(q, 5) {
			fmt.Printf("   %-50s %.3f\n", h.Name, h.Score)
		}
	}
}

// rankCase is one query and where its answer must rank: Top1 must be the
// first hit; every name in Top3 must be among the first three.
type rankCase struct {
	query string
	top1  string
	top3  []string
}

var rankCases = []rankCase{
	{query: "create github issue", top1: "mcp__github__create_issue"},
	{query: "GitHub create issue", top1: "mcp__github__create_issue"},
	{query: "read file", top3: []string{"mcp__filesystem__read_text_file", "mcp__google-drive__read_file"}},
	{query: "send a slack message", top1: "mcp__slack__slack_post_message"},
	{query: "list kubernetes pods", top1: "mcp__kubernetes__pods_list"},
	{query: "ListPods", top1: "mcp__kubernetes__pods_list"},
	{query: "pod logs", top1: "mcp__kubernetes__pods_log"},
	{query: "kube logs", top1: "mcp__kubernetes__pods_log"},
	{query: "mcp__github__create_issue", top1: "mcp__github__create_issue"},
	{query: "MCP__GITHUB__CREATE_ISSUE", top1: "mcp__github__create_issue"},
	{query: "browser_navigate", top1: "mcp__playwright__browser_navigate"},
	{query: "create_issue", top3: []string{"mcp__github__create_issue", "mcp__gitlab__create_issue", "mcp__linear__create_issue"}},
	{query: "createIssue", top3: []string{"mcp__jira__jira_create_issue", "mcp__linear__create_issue"}},
	{query: "take a screenshot of the page", top1: "mcp__playwright__browser_take_screenshot", top3: []string{"mcp__puppeteer__puppeteer_screenshot"}},
	{query: "query postgres database", top1: "mcp__postgres__query"},
	{query: "+linear create issue", top1: "mcp__linear__create_issue"},
	{query: "upload file to s3", top1: "mcp__aws__s3_put_object"},
	{query: "what time is it in tokyo", top3: []string{"mcp__time__get_current_time"}},
	{query: "convert timezone", top1: "mcp__time__convert_time"},
	{query: "merge pull request", top1: "mcp__github__merge_pull_request", top3: []string{"mcp__gitlab__merge_merge_request"}},
	{query: "open a pull request", top1: "mcp__github__create_pull_request"},
	{query: "search the web", top3: []string{"mcp__brave-search__brave_web_search", "mcp__exa__web_search_exa"}},
	{query: "restart deployment", top1: "mcp__kubernetes__deployment_rollout_restart"},
	{query: "scale deployment replicas", top1: "mcp__kubernetes__deployment_scale"},
	{query: "run sql on supabase", top1: "mcp__supabase__execute_sql"},
	{query: "who is on call", top3: []string{"mcp__pagerduty__list_oncalls", "mcp__grafana__get_current_oncall_users"}},
	{query: "get pr diff", top3: []string{"mcp__github__get_pull_request_diff"}},
	{query: "schedule a meeting", top1: "mcp__google-calendar__create_event"},
	{query: "jql search", top1: "mcp__jira__jira_search"},
	{query: "transition jira issue to done", top1: "mcp__jira__jira_transition_issue"},
	{query: "add reaction emoji", top3: []string{"mcp__slack__slack_add_reaction", "mcp__discord__add_reaction"}},
	{query: "click button in browser", top1: "mcp__playwright__browser_click"},
	{query: "fill form", top1: "mcp__playwright__browser_fill_form"},
	{query: "rename file", top1: "mcp__filesystem__move_file"},
	{query: "directory tree", top1: "mcp__filesystem__directory_tree"},
	{query: "git commit", top1: "mcp__git__git_commit"},
	{query: "staged changes", top1: "mcp__git__git_diff_staged"},
	{query: "knowledge graph entities", top1: "mcp__memory__create_entities"},
	{query: "fetch url as markdown", top1: "mcp__fetch__fetch"},
	{query: "invoice customer stripe", top3: []string{"mcp__stripe__create_invoice"}},
	{query: "refund payment", top1: "mcp__stripe__create_refund"},
	{query: "send sms", top1: "mcp__twilio__send_sms"},
	{query: "send email", top1: "mcp__gmail__send_email"},
	{query: "acknowledge incident", top1: "mcp__pagerduty__acknowledge_incident"},
	{query: "promql query", top1: "mcp__grafana__query_prometheus"},
	{query: "dns record", top3: []string{"mcp__cloudflare__dns_records_list", "mcp__cloudflare__dns_record_create"}},
	{query: "failed ci job logs", top3: []string{"mcp__github__get_job_logs", "mcp__circleci__get_build_failure_logs"}},
	{query: "resolve sentry issue", top1: "mcp__sentry__update_issue"},
	{query: "append rows to spreadsheet", top1: "mcp__google-sheets__add_rows"},
	{query: "library documentation", top1: "mcp__context7__get-library-docs"},
	{query: "create notion page", top3: []string{"mcp__notion__API-post-page"}},
	{query: "helm install chart", top1: "mcp__kubernetes__helm_install"},
	{query: "lambda invoke", top1: "mcp__aws__lambda_invoke"},
	{query: "EC2 instances", top3: []string{"mcp__aws__ec2_describe_instances"}},
	{query: "bigquery sql", top1: "mcp__gcp__bigquery_query"},
}

func TestSearchRanking(t *testing.T) {
	docs := loadCorpus(t)
	if len(docs) < 500 {
		t.Fatalf("corpus has %d tools, want at least 500", len(docs))
	}
	ix := NewIndex(docs)
	if len(rankCases) < 30 {
		t.Fatalf("%d ranking cases, want at least 30", len(rankCases))
	}
	for _, c := range rankCases {
		hits := ix.Search(c.query, 3)
		var names []string
		for _, h := range hits {
			names = append(names, h.Name)
		}
		if c.top1 != "" && (len(names) == 0 || names[0] != c.top1) {
			t.Errorf("Search(%q): top hit %v, want %s", c.query, names, c.top1)
		}
		for _, want := range c.top3 {
			if !contains(names, want) {
				t.Errorf("Search(%q): top 3 %v lack %s", c.query, names, want)
			}
		}
	}
}

func TestSearchForms(t *testing.T) {
	ix := NewIndex(loadCorpus(t))
	names := func(hits []Hit) []string {
		var out []string
		for _, h := range hits {
			out = append(out, h.Name)
		}
		return out
	}
	t.Run("select names tools in order and skips unknown ones", func(t *testing.T) {
		got := names(ix.Search("select:mcp__time__get_current_time, mcp__nope__x,mcp__fetch__fetch,mcp__time__get_current_time", 1))
		want := []string{"mcp__time__get_current_time", "mcp__fetch__fetch"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("select (-want +got):\n%s", diff)
		}
	})
	t.Run("select by the server's own name", func(t *testing.T) {
		got := names(ix.Search("SELECT:sequentialthinking", 0))
		if diff := cmp.Diff([]string{"mcp__sequential-thinking__sequentialthinking"}, got); diff != "" {
			t.Errorf("select (-want +got):\n%s", diff)
		}
	})
	t.Run("+word keeps only tools of that name or server", func(t *testing.T) {
		for _, h := range ix.Search("+slack send message", 20) {
			if !strings.Contains(h.Name, "slack") {
				t.Errorf("hit %s lacks slack", h.Name)
			}
		}
		if hits := ix.Search("+nonexistentword issue", 5); hits != nil {
			t.Errorf("a required word no tool has matched %v", names(hits))
		}
	})
	t.Run("limits", func(t *testing.T) {
		if n := len(ix.Search("issue", 0)); n != DefaultLimit {
			t.Errorf("limit 0 gave %d hits, want %d", n, DefaultLimit)
		}
		if n := len(ix.Search("issue", 1000)); n > MaxLimit {
			t.Errorf("limit 1000 gave %d hits, cap is %d", n, MaxLimit)
		}
	})
	t.Run("nothing to find", func(t *testing.T) {
		for _, q := range []string{"", "   ", "the a of", "zzzzqqq", "select:", "!!!"} {
			if hits := ix.Search(q, 5); hits != nil {
				t.Errorf("Search(%q) = %v, want nil", q, hits)
			}
		}
		if hits := NewIndex(nil).Search("issue", 5); hits != nil {
			t.Errorf("empty index found %v", hits)
		}
	})
	t.Run("prefix of an unknown word completes it", func(t *testing.T) {
		got := names(ix.Search("kubernet", 5))
		if len(got) == 0 {
			t.Fatal("kubernet found nothing")
		}
		for _, n := range got {
			if !strings.HasPrefix(n, "mcp__kubernetes__") {
				t.Errorf("kubernet → %v, want kubernetes tools", got)
			}
		}
	})
	t.Run("ties break by name, scores descend", func(t *testing.T) {
		hits := ix.Search("list", 50)
		for i := 1; i < len(hits); i++ {
			a, b := hits[i-1], hits[i]
			if a.Score < b.Score || a.Score == b.Score && a.Name > b.Name {
				t.Fatalf("hits %d and %d out of order: %+v %+v", i-1, i, a, b)
			}
		}
	})
}

func TestSearchDeterministic(t *testing.T) {
	docs := loadCorpus(t)
	ix := NewIndex(docs)
	shuffled := append([]Doc(nil), docs...)
	rand.New(rand.NewSource(1)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	ix2 := NewIndex(shuffled)
	for _, c := range rankCases {
		a, b := ix.Search(c.query, 10), ix2.Search(c.query, 10)
		if diff := cmp.Diff(a, b); diff != "" {
			t.Errorf("Search(%q) depends on index order (-first +shuffled):\n%s", c.query, diff)
		}
		if diff := cmp.Diff(a, ix.Search(c.query, 10)); diff != "" {
			t.Errorf("Search(%q) differs between runs:\n%s", c.query, diff)
		}
	}
}

func TestTokenizeAndStem(t *testing.T) {
	for in, want := range map[string][]string{
		"create_issue":       {"create", "issue"},
		"getPullRequestDiff": {"get", "pull", "request", "diff", "getpullrequestdiff"},
		"HTTPServer":         {"http", "server", "httpserver"},
		"list-k8s-pods":      {"list", "k", "8", "s", "k8s", "pods"},
		"tool_0001":          {"tool", "0001"},
		"Ünïcode Straße":     {"ünïcode", "straße"},
		"a.b/c":              {"a", "b", "c"},
		"":                   nil,
		"___":                nil,
	} {
		if diff := cmp.Diff(want, Tokenize(in)); diff != "" {
			t.Errorf("Tokenize(%q) (-want +got):\n%s", in, diff)
		}
	}
	groups := [][]string{
		{"create", "creates", "creating", "created"},
		{"issue", "issues"},
		{"query", "queries"},
		{"commit", "commits", "committed", "committing"},
		{"run", "running", "runs"},
		{"add", "added", "adding"},
		{"box", "boxes"},
		{"search", "searches", "searching"},
		{"list", "lists", "listing", "listed"},
	}
	for _, g := range groups {
		for _, w := range g[1:] {
			if Stem(w) != Stem(g[0]) {
				t.Errorf("Stem(%q) = %q, Stem(%q) = %q; want equal", w, Stem(w), g[0], Stem(g[0]))
			}
		}
	}
	for _, w := range []string{"string", "status", "alias", "s3", "need"} {
		if Stem(w) != w && Stem(w) != strings.TrimSuffix(w, "e") {
			t.Errorf("Stem(%q) = %q, want it kept", w, Stem(w))
		}
	}
}

// bigCorpus makes n tools by repeating the corpus under numbered servers.
func bigCorpus(tb testing.TB, n int) []Doc {
	base := loadCorpus(tb)
	out := make([]Doc, 0, n)
	for i := 0; len(out) < n; i++ {
		for _, d := range base {
			if len(out) == n {
				break
			}
			d.Server = fmt.Sprintf("%s%d", d.Server, i)
			d.Name = toolsurface.ToolName(d.Server, d.Tool)
			out = append(out, d)
		}
	}
	return out
}

// BenchmarkToolSearch measures one query over 10,000 tools (the p50 in
// docs/benchmarks.md comes from TestToolSearchLatency).
func BenchmarkToolSearch(b *testing.B) {
	ix := NewIndex(bigCorpus(b, 10000))
	queries := make([]string, len(rankCases))
	for i, c := range rankCases {
		queries[i] = c.query
	}
	var took []time.Duration
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		ix.Search(queries[i%len(queries)], 5)
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-µs")
}

func BenchmarkSearchIndexBuild(b *testing.B) {
	docs := bigCorpus(b, 10000)
	for b.Loop() {
		NewIndex(docs)
	}
}

// FuzzSearch: no query and no tool text makes Search panic, break its
// limit or order, or answer differently twice.
func FuzzSearch(f *testing.F) {
	f.Add("create github issue", "Create an issue.", 5)
	f.Add("select:mcp__x__y,mcp__fuzz__tool", "", 0)
	f.Add("+slack +", "x", -3)
	f.Add("HTTPServer getPullRequest s3 k8s", "\xff\xfe", 1000)
	f.Add("mcp__fuzz__tool", "ünïcode Straße", 2)
	base := loadCorpus(f)[:60]
	f.Fuzz(func(t *testing.T, query, text string, limit int) {
		docs := append([]Doc{{Name: "mcp__fuzz__tool", Server: "fuzz", Tool: text, Description: text,
			Args: []Arg{{Name: text, Description: query}}}}, base...)
		ix := NewIndex(docs)
		hits := ix.Search(query, limit)
		max := limit
		if max <= 0 {
			max = DefaultLimit
		}
		max = min(max, MaxLimit)
		isSelect := len(strings.TrimSpace(query)) >= len(SelectPrefix) && strings.EqualFold(strings.TrimSpace(query)[:len(SelectPrefix)], SelectPrefix)
		if !isSelect && len(hits) > max {
			t.Fatalf("%d hits for limit %d", len(hits), limit)
		}
		for i, h := range hits {
			if _, ok := ix.Doc(h.Name); !ok {
				t.Fatalf("hit %q is not indexed", h.Name)
			}
			if math.IsNaN(h.Score) || h.Score <= 0 {
				t.Fatalf("hit %+v has a bad score", h)
			}
			if !isSelect && i > 0 && better(h, hits[i-1]) {
				t.Fatalf("hits out of order: %+v before %+v", hits[i-1], h)
			}
		}
		if diff := cmp.Diff(hits, ix.Search(query, limit)); diff != "" {
			t.Fatalf("second search differs:\n%s", diff)
		}
	})
}
