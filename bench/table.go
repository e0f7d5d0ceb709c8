package main

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// median returns the median of xs (the mean of the middle two for an even
// count), or NaN for none.
func median(xs []float64) float64 {
	var ok []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			ok = append(ok, x)
		}
	}
	if len(ok) == 0 {
		return math.NaN()
	}
	slices.Sort(ok)
	m := len(ok) / 2
	if len(ok)%2 == 1 {
		return ok[m]
	}
	return (ok[m-1] + ok[m]) / 2
}

// percentile returns the p-th percentile (0–100) of ds, sorting ds.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[(len(ds)-1)*p/100]
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// table prints aligned rows; a NaN cell prints as "—".
type table struct {
	title string
	head  []string
	rows  [][]string
	notes []string
}

func (t *table) add(cells ...any) {
	row := make([]string, len(cells))
	for i, c := range cells {
		switch v := c.(type) {
		case string:
			row[i] = v
		case float64:
			row[i] = num(v)
		case int:
			row[i] = fmt.Sprint(v)
		default:
			row[i] = fmt.Sprint(v)
		}
	}
	t.rows = append(t.rows, row)
}

func (t *table) note(format string, args ...any) {
	t.notes = append(t.notes, fmt.Sprintf(format, args...))
}

func num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "—"
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func ratio(a, b float64) float64 {
	if b == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return a / b
}

func (t *table) print() {
	fmt.Println("## " + t.title)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, strings.Join(t.head, "\t"))
	for _, r := range t.rows {
		fmt.Fprintln(w, strings.Join(r, "\t"))
	}
	w.Flush()
	for _, n := range t.notes {
		fmt.Println("  " + n)
	}
	fmt.Println()
}
