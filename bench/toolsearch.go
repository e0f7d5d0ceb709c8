package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/toolsurface"
	"github.com/switchboard-mcp/switchboard/toolsurface/search"
)

// searchQueries are queries a model sends tool_search: words, a camelCase
// name, an exact name, a select: list and a required term.
var searchQueries = []string{
	"create github issue", "read file", "send a slack message", "list kubernetes pods", "ListPods",
	"pod logs", "mcp__github__create_issue", "query the database", "who is on call", "search the web",
	"select:mcp__github__create_issue,mcp__slack__slack_post_message", "+slack send", "take a screenshot",
	"open pull request", "weather forecast",
}

// toolsearch: toolsurface's tool_search index over 10,000 tools (the
// ranking corpus of toolsurface/testdata repeated under numbered server
// names), queried one query at a time.
func (b *bench) toolsearch() error {
	data, err := os.ReadFile(filepath.Join(b.root, "toolsurface", "testdata", "search_corpus.json"))
	if err != nil {
		return err
	}
	var corpus []struct {
		Server string      `json:"server"`
		Tools  []*mcp.Tool `json:"tools"`
	}
	if err := json.Unmarshal(data, &corpus); err != nil {
		return fmt.Errorf("search corpus: %w", err)
	}
	const total = 10_000
	var docs []search.Doc
	for copyN := 0; len(docs) < total; copyN++ {
		for _, s := range corpus {
			server := s.Server
			if copyN > 0 {
				server = fmt.Sprintf("%s%d", s.Server, copyN)
			}
			for _, t := range s.Tools {
				if len(docs) < total {
					docs = append(docs, search.DocFor(toolsurface.ToolName(server, t.Name), server, t))
				}
			}
		}
	}
	var builds, p50s, p99s []float64
	for r := range b.rounds {
		start := time.Now()
		ix := search.NewIndex(docs)
		builds = append(builds, ms(time.Since(start)))
		n := max(b.n, 1000)
		ds := make([]time.Duration, n)
		for i := range ds {
			t0 := time.Now()
			if hits := ix.Search(searchQueries[i%len(searchQueries)], 5); len(hits) == 0 {
				return fmt.Errorf("no hits for %q", searchQueries[i%len(searchQueries)])
			}
			ds[i] = time.Since(t0)
		}
		p50s, p99s = append(p50s, us(percentile(ds, 50))), append(p99s, us(percentile(ds, 99)))
		fmt.Fprintf(os.Stderr, "  round %d  index %.0f ms  search p50 %.1f µs  p99 %.1f µs\n", r+1, builds[r], p50s[r], p99s[r])
	}
	tb := &table{
		title: fmt.Sprintf("tool_search over %d tools (toolsurface/search.Index, limit 5, medians of %d rounds)", len(docs), b.rounds),
		head:  []string{"measure", "value", "target"},
	}
	tb.add("search p50 µs", median(p50s), "≤ 1000 µs")
	tb.add("search p99 µs", median(p99s), "")
	tb.add("index build ms (once per tool set)", median(builds), "")
	tb.note("%d queries a round, in turn from %d (words, camelCase, exact name, select:, +required).", max(b.n, 1000), len(searchQueries))
	tb.note("Deferral token savings for a 100-tool server: go test ./host -run TestDeferralTokenSaving -v (docs/benchmarks.md).")
	tb.print()
	return nil
}
