package console

import (
	"fmt"
	"math"
	"net/http"

	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
)

// The Calls page under a gateway: its recent calls from the audit log
// (a member sees its own), and small charts of its metrics per server —
// SVG drawn here, no script.

// chart is one server's row of the charts: calls with errors, and the
// latency histogram.
type chart struct {
	Server         string
	Calls, Errors  uint64
	CallsW, ErrW   int // bar widths, of chartW
	MeanMS, P95MS  string
	Bars           []bar // latency buckets
	HistW, HistH   int
	BucketsCaption string
}

type bar struct {
	X, Y, W, H int
	Title      string
}

const (
	chartW = 240
	histW  = 240
	histH  = 40
)

func charts(figs []gateway.ServerFigures, visible func(string) bool) []chart {
	var most uint64 = 1
	for _, f := range figs {
		if visible(f.Server) {
			most = max(most, f.Calls)
		}
	}
	var out []chart
	for _, f := range figs {
		if !visible(f.Server) || f.Calls == 0 {
			continue
		}
		name := f.Server
		if name == "" {
			name = "(the gateway's own tools)"
		}
		ch := chart{Server: name, Calls: f.Calls, Errors: f.Errors, HistW: histW, HistH: histH,
			CallsW: int(math.Ceil(float64(f.Calls) / float64(most) * chartW)),
			ErrW:   int(math.Ceil(float64(f.Errors) / float64(most) * chartW)),
			MeanMS: fmt.Sprintf("%.1f ms", f.LatencySum/float64(f.Calls)*1000),
			P95MS:  quantile(f, 0.95),
		}
		// Each bucket's own count (the histogram is cumulative), with +Inf.
		counts := make([]uint64, len(f.Buckets)+1)
		prev := uint64(0)
		for i, c := range f.Buckets {
			counts[i], prev = c-prev, c
		}
		counts[len(f.Buckets)] = f.Calls - prev
		var top uint64 = 1
		for _, c := range counts {
			top = max(top, c)
		}
		w := histW / len(counts)
		for i, c := range counts {
			h := int(math.Ceil(float64(c) / float64(top) * histH))
			label := "over the last bound"
			if i < len(f.Bounds) {
				label = fmt.Sprintf("≤ %s", seconds(f.Bounds[i]))
			}
			ch.Bars = append(ch.Bars, bar{X: i * w, Y: histH - h, W: w - 1, H: h, Title: fmt.Sprintf("%s: %d", label, c)})
		}
		if len(f.Bounds) > 0 {
			ch.BucketsCaption = fmt.Sprintf("%s … %s and over", seconds(f.Bounds[0]), seconds(f.Bounds[len(f.Bounds)-1]))
		}
		out = append(out, ch)
	}
	return out
}

// quantile is the upper bound of the bucket holding the q-quantile.
func quantile(f gateway.ServerFigures, q float64) string {
	want := uint64(math.Ceil(q * float64(f.Calls)))
	for i, c := range f.Buckets {
		if c >= want {
			return "≤ " + seconds(f.Bounds[i])
		}
	}
	if len(f.Bounds) > 0 {
		return "> " + seconds(f.Bounds[len(f.Bounds)-1])
	}
	return "?"
}

func seconds(s float64) string {
	if s < 1 {
		return fmt.Sprintf("%g ms", s*1000)
	}
	return fmt.Sprintf("%g s", s)
}

// gatewayCalls are the gateway's recent calls the viewer may see: an
// admin every one, a member its own.
func (c *Console) gatewayCalls(v *Viewer) []gateway.AuditEntry {
	if c.o.GatewayCalls == nil {
		return nil
	}
	var out []gateway.AuditEntry
	for _, e := range c.o.GatewayCalls() {
		if v.Admin || e.Principal == v.Name {
			out = append(out, visibleEntry(e))
		}
	}
	return out
}

// visibleEntry is e with the text clients and servers wrote (the tool's
// name, its error, the arguments) made visible, as the terminal shows it.
func visibleEntry(e gateway.AuditEntry) gateway.AuditEntry {
	e.Principal, e.Tool, e.Decision, e.Answer, e.Error = termsafe.Line(e.Principal), termsafe.Line(e.Tool),
		termsafe.Line(e.Decision), termsafe.Line(e.Answer), termsafe.Line(e.Error)
	if e.Args != nil {
		args := make(map[string]any, len(e.Args))
		for k, v := range e.Args {
			args[termsafe.Line(k)] = termsafe.Line(fmt.Sprint(v))
		}
		e.Args = args
	}
	return e
}

// gatewayData is the gateway's part of the Calls page.
type gatewayData struct {
	Gateway bool
	// NoAudit: the gateway keeps no audit log, so its calls are not listed.
	NoAudit bool
	Calls   []gateway.AuditEntry
	Charts  []chart
}

func (c *Console) gatewayPart(r *http.Request) gatewayData {
	v := sessionOf(r).viewer
	d := gatewayData{Gateway: c.o.Login != nil || c.o.GatewayCalls != nil || c.o.Figures != nil, NoAudit: c.o.GatewayCalls == nil}
	d.Calls = c.gatewayCalls(v)
	if c.o.Figures != nil {
		var seen map[string]bool
		if !v.Admin {
			tools, _ := c.toolList(r.Context())
			seen = c.visibleServers(v, tools)
		}
		d.Charts = charts(c.o.Figures(), func(s string) bool { return seen == nil || seen[s] })
	}
	return d
}
