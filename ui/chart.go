package ui

import "github.com/sessionlog/sessionlog/audit"

// chart is the geometry of the cache chart, an SVG drawn on the server:
// one bar per step, its height the request's bytes, split into the bytes
// a prompt cache could reuse (bottom) and the bytes re-sent (top), and
// labelled with the reason the shared prefix broke.
type chart struct {
	Width, Height int
	Bars          []bar
	Max           int
	// Baseline is the y of the bars' foot; the labels hang below it.
	Baseline int
}

type bar struct {
	Row              audit.CacheRow
	X, W             int
	ReuseY, ReuseH   int
	ResendY, ResendH int
	LabelX, LabelY   int
	Label            string
}

const (
	chartPlot  = 240 // height of the plot area
	chartLabel = 90  // room for the rotated reason labels
	barWidth   = 14
	barGap     = 4
	chartLeft  = 8
)

func newChart(rows []audit.CacheRow) chart {
	c := chart{Baseline: chartPlot + 10}
	for _, r := range rows {
		c.Max = max(c.Max, r.Bytes)
	}
	c.Width = chartLeft*2 + len(rows)*(barWidth+barGap)
	c.Height = c.Baseline + chartLabel
	for i, r := range rows {
		b := bar{Row: r, X: chartLeft + i*(barWidth+barGap), W: barWidth, Label: r.Reason}
		if r.Null {
			b.Label = "no request"
		} else if c.Max > 0 {
			total := r.Bytes * chartPlot / c.Max
			reuse := r.Reusable * chartPlot / c.Max
			b.ReuseH, b.ResendH = reuse, total-reuse
			b.ReuseY = c.Baseline - reuse
			b.ResendY = b.ReuseY - b.ResendH
		}
		b.LabelX, b.LabelY = b.X+barWidth/2+4, c.Baseline+6
		c.Bars = append(c.Bars, b)
	}
	return c
}
