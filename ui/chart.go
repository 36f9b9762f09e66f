package ui

import (
	"strconv"

	"github.com/sessionlog/sessionlog/audit"
)

// chart is the geometry of the cache chart, an SVG drawn on the server:
// one bar per step, its height the request's bytes, split into the bytes
// a prompt cache could reuse (bottom) and the bytes re-sent (top), and
// labelled with the reason the shared prefix broke.
type chart struct {
	Width, Height int
	Bars          []bar
	// Max is the largest request's bytes: the height of the plot.
	Max int
	// Top and Baseline are the y of the plot's top and of the bars' foot;
	// the labels hang below the baseline.
	Top, Baseline int
	Left, Right   int
}

// bar is one step's bar.
type bar struct {
	Row              audit.CacheRow
	X, W             int
	ReuseY, ReuseH   int
	ResendY, ResendH int
	LabelX, LabelY   int
	// Name is the step T.S, or #N for a recorded exchange not mapped to
	// a step; Label the reason with its detail (audit.CacheRow.Cause).
	Name, Label string
}

const (
	chartTop    = 20  // room for the scale
	chartPlot   = 240 // height of the plot area
	chartLabel  = 96  // room for the rotated labels
	chartLeft   = 12
	chartRight  = 96 // the last labels lean right
	chartInside = 720
)

func newChart(rows []audit.CacheRow) chart {
	c := chart{Top: chartTop, Baseline: chartTop + chartPlot, Left: chartLeft}
	for _, r := range rows {
		c.Max = max(c.Max, r.Bytes)
	}
	// Bars fill about chartInside pixels, between 6 and 40 wide.
	step := 46
	if len(rows) > 0 {
		step = min(max(chartInside/len(rows), 8), 46)
	}
	w := step * 3 / 4
	c.Width = chartLeft + len(rows)*step + chartRight
	c.Right = c.Width - chartRight
	c.Height = c.Baseline + chartLabel
	for i, r := range rows {
		b := bar{Row: r, X: chartLeft + i*step, W: w, Name: rowName(&r), Label: r.Cause()}
		if r.Null {
			b.Label = "no request"
		} else if c.Max > 0 {
			total := r.Bytes * chartPlot / c.Max
			reuse := r.Reusable * chartPlot / c.Max
			b.ReuseH, b.ResendH = reuse, total-reuse
			b.ReuseY = c.Baseline - reuse
			b.ResendY = b.ReuseY - b.ResendH
		}
		b.LabelX, b.LabelY = b.X+w/2, c.Baseline+10
		c.Bars = append(c.Bars, b)
	}
	return c
}

// rowName names a row of the cache report: its step, or #N for an
// exchange of a recorded session that no step maps.
func rowName(r *audit.CacheRow) string {
	if r.Exchange > 0 && r.Start < 0 {
		return "#" + strconv.Itoa(r.Exchange)
	}
	return r.Ref.String()
}
