package gateway

import (
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
)

// Metrics are a gateway's Prometheus metrics, in a registry of their own
// (nothing global):
//
//	switchboard_gateway_calls_total{server,tool}            tool calls answered
//	switchboard_gateway_call_errors_total{server,tool}      of them, errors (an error result or a protocol error)
//	switchboard_gateway_call_duration_seconds{server,tool}  latency histogram
//	switchboard_gateway_decisions_total{decision}           allow, ask, deny, rate_limited, none
//	switchboard_gateway_sessions                            client sessions open
//	switchboard_server_up{server}                           1 when connected and healthy
//	switchboard_server_circuit_open{server}                 1 while the breaker is open
//	switchboard_server_state{server,state}                  1 for the server's state
//	switchboard_server_reconnects_total{server}             reconnects after unexpected closes
//
// server is "" for the gateway's own tools (tool_search, the admin tools)
// and for names it does not serve, whose tool label is then "(unknown)",
// so a client cannot grow the label set without bound; nor can a server,
// whose tools past MetricsToolsPerServer are "(other)". Create it with
// NewMetrics, pass it in Options.Metrics and serve Handler.
type Metrics struct {
	reg       *prometheus.Registry
	calls     *prometheus.CounterVec
	errors    *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	decisions *prometheus.CounterVec
	g         *Gateway

	// series are the children of the vectors by label values, looked
	// up once: WithLabelValues hashes the labels and takes the vector's
	// lock, four times a call.
	mu        sync.RWMutex
	series    map[seriesKey]*toolSeries
	decidedBy map[string]prometheus.Counter
	// tools counts the tool labels of each server (MetricsToolsPerServer
	// at most).
	tools map[string]int
}

// MetricsToolsPerServer is how many tools of one server have series of
// their own; the calls of the server's other tools are counted under
// tool="(other)". A server chooses its tools' names (up to 100,000 of
// them, and new ones at every list): without a bound, one that renamed
// its tools at each list would add series with every call, for as long
// as the gateway runs. A tool label is cut at metricsToolMax characters,
// what a terminal would act on in it escaped (termsafe.Line).
const MetricsToolsPerServer = 500

// metricsToolMax cuts a tool label: 128 characters, the longest tool
// name MCP allows.
const metricsToolMax = 128

type seriesKey struct{ server, tool string }

// toolSeries are the series of one (server, tool). errors is nil until
// the tool's first error: a series is exported from its first use.
type toolSeries struct {
	calls   prometheus.Counter
	errors  prometheus.Counter
	latency prometheus.Observer
}

// NewMetrics returns the metrics of a gateway over h (the servers' states
// are read from h at each scrape), with the Go runtime's and the process's
// own collectors.
func NewMetrics(h *host.Host) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	labels := []string{"server", "tool"}
	m.calls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "switchboard_gateway_calls_total", Help: "Tool calls the gateway answered, by server and tool.",
	}, labels)
	m.errors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "switchboard_gateway_call_errors_total", Help: "Tool calls that ended with an error result or a protocol error.",
	}, labels)
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "switchboard_gateway_call_duration_seconds", Help: "Time from a tool call's arrival to its answer.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 120},
	}, labels)
	m.decisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "switchboard_gateway_decisions_total", Help: "Permission decisions of tool calls (none: no rule was consulted).",
	}, []string{"decision"})
	m.reg.MustRegister(m.calls, m.errors, m.latency, m.decisions,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&hostCollector{h: h, m: m})
	return m
}

// Registry returns the registry, for an embedder's own collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in Prometheus's text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// bind tells m the gateway whose sessions it counts.
func (m *Metrics) bind(g *Gateway) { m.g = g }

func (m *Metrics) call(server, tool, decision string, out outcome) {
	if server == "" && tool != "" {
		if m.g == nil || !m.g.serves(tool) {
			tool = "(unknown)"
		}
	}
	if decision == "" {
		decision = "none"
	}
	failed := out.isError || out.err != ""
	s, decided := m.seriesOf(server, tool, decision, failed)
	s.calls.Inc()
	if failed {
		s.errors.Inc()
	}
	s.latency.Observe(out.duration.Seconds())
	decided.Inc()
}

// seriesOf returns the series of (server, tool), with its errors counter
// when failed, and the counter of decision.
func (m *Metrics) seriesOf(server, tool, decision string, failed bool) (*toolSeries, prometheus.Counter) {
	k := seriesKey{server, tool}
	m.mu.RLock()
	s, d := m.series[k], m.decidedBy[decision]
	m.mu.RUnlock()
	if s != nil && d != nil && (!failed || s.errors != nil) {
		return s, d
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.series == nil {
		m.series, m.decidedBy, m.tools = map[seriesKey]*toolSeries{}, map[string]prometheus.Counter{}, map[string]int{}
	}
	s = m.series[k]
	if s == nil && server != "" {
		// A new tool of a server: its own series while the server has
		// fewer than MetricsToolsPerServer, else the server's "(other)".
		// A server's name for its tool may hold what a terminal acts
		// on (an escape sequence, a bidi override): the label shows it
		// escaped, as status does, for whoever reads /metrics with
		// curl.
		if k.tool = cutString(termsafe.Line(k.tool), metricsToolMax); m.tools[server] >= MetricsToolsPerServer {
			k.tool = "(other)"
		}
		if s = m.series[k]; s == nil {
			m.tools[server]++
		}
	}
	server, tool = k.server, k.tool
	if s == nil {
		s = &toolSeries{calls: m.calls.WithLabelValues(server, tool), latency: m.latency.WithLabelValues(server, tool)}
		m.series[k] = s
	}
	if failed && s.errors == nil {
		s.errors = m.errors.WithLabelValues(server, tool)
	}
	d = m.decidedBy[decision]
	if d == nil {
		d = m.decisions.WithLabelValues(decision)
		m.decidedBy[decision] = d
	}
	return s, d
}

// ServerFigures are one server's call figures, as the metrics count them
// since the gateway started.
type ServerFigures struct {
	// Server is "" for the gateway's own tools.
	Server string
	Calls  uint64
	Errors uint64
	// LatencySum is the seconds all calls took; Buckets are the latency
	// histogram's cumulative counts at each upper bound Bounds (seconds).
	LatencySum float64
	Bounds     []float64
	Buckets    []uint64
}

// Figures returns the call figures per server, sorted by server.
func (m *Metrics) Figures() []ServerFigures {
	by := map[string]*ServerFigures{}
	get := func(mt *dto.Metric) *ServerFigures {
		var server string
		for _, l := range mt.GetLabel() {
			if l.GetName() == "server" {
				server = l.GetValue()
			}
		}
		f := by[server]
		if f == nil {
			f = &ServerFigures{Server: server}
			by[server] = f
		}
		return f
	}
	fams, _ := m.reg.Gather()
	for _, fam := range fams {
		for _, mt := range fam.GetMetric() {
			switch fam.GetName() {
			case "switchboard_gateway_calls_total":
				get(mt).Calls += uint64(mt.GetCounter().GetValue())
			case "switchboard_gateway_call_errors_total":
				get(mt).Errors += uint64(mt.GetCounter().GetValue())
			case "switchboard_gateway_call_duration_seconds":
				f, h := get(mt), mt.GetHistogram()
				f.LatencySum += h.GetSampleSum()
				for i, b := range h.GetBucket() {
					if i == len(f.Buckets) {
						f.Bounds = append(f.Bounds, b.GetUpperBound())
						f.Buckets = append(f.Buckets, 0)
					}
					f.Buckets[i] += b.GetCumulativeCount()
				}
			}
		}
	}
	out := make([]ServerFigures, 0, len(by))
	for _, f := range by {
		out = append(out, *f)
	}
	slices.SortFunc(out, func(a, b ServerFigures) int { return strings.Compare(a.Server, b.Server) })
	return out
}

// serves reports whether name is a tool the gateway serves.
func (g *Gateway) serves(name string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.tools[name]
	return ok
}

var (
	descSessions   = prometheus.NewDesc("switchboard_gateway_sessions", "Client sessions open.", nil, nil)
	descUp         = prometheus.NewDesc("switchboard_server_up", "1 when the server is connected and its lists work.", []string{"server"}, nil)
	descCircuit    = prometheus.NewDesc("switchboard_server_circuit_open", "1 while the server's circuit breaker is open.", []string{"server"}, nil)
	descState      = prometheus.NewDesc("switchboard_server_state", "1 for the state the server is in.", []string{"server", "state"}, nil)
	descReconnects = prometheus.NewDesc("switchboard_server_reconnects_total", "Reconnects after unexpected closes.", []string{"server"}, nil)
)

// hostCollector reads the servers' states and the sessions at scrape time.
type hostCollector struct {
	h *host.Host
	m *Metrics
}

func (c *hostCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descSessions, descUp, descCircuit, descState, descReconnects} {
		ch <- d
	}
}

func (c *hostCollector) Collect(ch chan<- prometheus.Metric) {
	if g := c.m.g; g != nil {
		n := 0
		for ss := range g.srv.Sessions() {
			if !g.isStandIn(ss) {
				n++
			}
		}
		ch <- prometheus.MustNewConstMetric(descSessions, prometheus.GaugeValue, float64(n))
	}
	if c.h == nil {
		return
	}
	for _, s := range c.h.Status() {
		up, open := 0.0, 0.0
		if s.State == host.StateConnected && len(s.ListErrors) == 0 {
			up = 1
		}
		if s.State == host.StateCircuitOpen {
			open = 1
		}
		ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, up, s.Name)
		ch <- prometheus.MustNewConstMetric(descCircuit, prometheus.GaugeValue, open, s.Name)
		ch <- prometheus.MustNewConstMetric(descState, prometheus.GaugeValue, 1, s.Name, string(s.State))
		ch <- prometheus.MustNewConstMetric(descReconnects, prometheus.CounterValue, float64(s.Reconnects), s.Name)
	}
}
