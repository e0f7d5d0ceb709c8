package gateway

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestMetricsCallSeries: a call's metrics cost no allocation once its
// series exist, and the errors series of a tool still appears only with
// its first error (the exposition is as WithLabelValues per call made it).
func TestMetricsCallSeries(t *testing.T) {
	m := NewMetrics(nil)
	ok := outcome{duration: time.Millisecond}
	m.call("echo", "echo", "allow", ok)
	if n := testing.AllocsPerRun(100, func() { m.call("echo", "echo", "allow", ok) }); n != 0 {
		t.Errorf("a call's metrics allocated %v times, want 0", n)
	}
	series := func() map[string]float64 {
		got := map[string]float64{}
		fams, err := m.reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, fam := range fams {
			switch fam.GetName() {
			case "switchboard_gateway_calls_total", "switchboard_gateway_call_errors_total", "switchboard_gateway_decisions_total":
				for _, mt := range fam.GetMetric() {
					key := fam.GetName()
					for _, l := range mt.GetLabel() {
						key += " " + l.GetName() + "=" + l.GetValue()
					}
					got[key] = mt.GetCounter().GetValue()
				}
			}
		}
		return got
	}
	want := map[string]float64{
		"switchboard_gateway_calls_total server=echo tool=echo": 102,
		"switchboard_gateway_decisions_total decision=allow":    102,
	}
	if diff := cmp.Diff(want, series()); diff != "" {
		t.Errorf("series before an error (-want +got):\n%s", diff)
	}
	m.call("echo", "echo", "", outcome{isError: true})
	want["switchboard_gateway_calls_total server=echo tool=echo"] = 103
	want["switchboard_gateway_call_errors_total server=echo tool=echo"] = 1
	want["switchboard_gateway_decisions_total decision=none"] = 1
	if diff := cmp.Diff(want, series()); diff != "" {
		t.Errorf("series after an error (-want +got):\n%s", diff)
	}
}
