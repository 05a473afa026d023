package fleetweb

import (
	"fmt"

	"github.com/fleetkit/fleetapi/fleet"
)

// chart is a bar chart drawn by the server as SVG: one bar per hour, oldest
// on the left, the requests refused by the rate limit (429) drawn over the
// bottom of each bar in another colour.
type chart struct {
	Title         string
	Width, Height int
	Left, Bottom  int // the plot area's left edge and baseline
	Bars          []bar
	Ticks         []tick
	Labels        []tick
	Max           int
}

type bar struct {
	X, W, Y, H, RY, RH float64
	Title              string
}

type tick struct {
	X, Y  float64
	Label string
}

// drawChart lays out hours (newest first) as bars; every labelEvery-th hour
// is labelled on the time axis.
func drawChart(title string, hours []fleet.Usage, labelEvery int) chart {
	c := chart{Title: title, Width: 720, Height: 220, Left: 48, Bottom: 190}
	plotW, plotH := float64(c.Width-c.Left-8), float64(c.Bottom-10)
	for _, h := range hours {
		c.Max = max(c.Max, h.Requests)
	}
	top := 4 * niceCeil((c.Max+3)/4) // four equal steps on the value axis
	n := len(hours)
	step := plotW / float64(max(n, 1))
	for i := range n {
		h := hours[n-1-i] // oldest first
		x := float64(c.Left) + float64(i)*step
		bh := float64(h.Requests) / float64(top) * plotH
		rh := float64(h.Rejected) / float64(top) * plotH
		c.Bars = append(c.Bars, bar{X: x + step*0.1, W: step * 0.8, Y: float64(c.Bottom) - bh, H: bh,
			RY: float64(c.Bottom) - rh, RH: rh,
			Title: fmt.Sprintf("%s: %s, %s refused (429)", h.Hour.UTC().Format("Jan 2 15:00"), plural(h.Requests, "request", "requests"), num(h.Rejected))})
		if (n-1-i)%labelEvery == 0 {
			label := h.Hour.UTC().Format("15:00")
			if labelEvery >= 24 {
				label = h.Hour.UTC().Format("Jan 2")
			}
			c.Labels = append(c.Labels, tick{X: x + step/2, Y: float64(c.Bottom + 16), Label: label})
		}
	}
	for i := 0; i <= 4; i++ {
		v := top * i / 4
		c.Ticks = append(c.Ticks, tick{X: float64(c.Left - 6), Y: float64(c.Bottom) - float64(v)/float64(top)*plotH, Label: num(v)})
	}
	return c
}

// niceCeil returns a round number (1, 2 or 5 times a power of ten) at or
// above n.
func niceCeil(n int) int {
	for p := 1; ; p *= 10 {
		for _, m := range []int{1, 2, 5} {
			if v := m * p; v >= n {
				return v
			}
		}
	}
}
