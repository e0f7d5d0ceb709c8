package console

import (
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/gateway"
)

// The charts are drawn from the metrics' figures: bars in proportion to
// the busiest visible server, each latency bucket's own count (the
// histogram is cumulative), the 95% bound; a server the viewer does not
// see, or with no call, is not drawn.
func TestCharts(t *testing.T) {
	figs := []gateway.ServerFigures{
		{Server: "a", Calls: 4, Errors: 1, LatencySum: 0.4, Bounds: []float64{0.01, 0.1, 1}, Buckets: []uint64{1, 3, 4}},
		{Server: "b", Calls: 2, LatencySum: 3, Bounds: []float64{0.01, 0.1, 1}, Buckets: []uint64{0, 0, 1}},
		{Server: "hidden", Calls: 100, Bounds: []float64{1}, Buckets: []uint64{100}},
		{Server: "idle", Bounds: []float64{1}, Buckets: []uint64{0}},
	}
	got := charts(figs, func(s string) bool { return s != "hidden" })
	if len(got) != 2 || got[0].Server != "a" || got[1].Server != "b" {
		t.Fatalf("charts: %+v", got)
	}
	a, b := got[0], got[1]
	if a.CallsW != chartW || a.ErrW != chartW/4 || b.CallsW != chartW/2 {
		t.Errorf("bars: a %d/%d, b %d", a.CallsW, a.ErrW, b.CallsW)
	}
	if a.MeanMS != "100.0 ms" || a.P95MS != "≤ 1 s" || b.P95MS != "> 1 s" {
		t.Errorf("latency: a %s %s, b %s", a.MeanMS, a.P95MS, b.P95MS)
	}
	var counts []string
	for _, br := range a.Bars {
		counts = append(counts, br.Title)
	}
	if want := "≤ 10 ms: 1|≤ 100 ms: 2|≤ 1 s: 1|over the last bound: 0"; strings.Join(counts, "|") != want {
		t.Errorf("buckets %q, want %q", strings.Join(counts, "|"), want)
	}
	if a.Bars[1].H != histH || a.Bars[3].H != 0 {
		t.Errorf("bar heights: %+v", a.Bars)
	}
}
