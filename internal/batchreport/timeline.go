package batchreport

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/batchstats"
	"github.com/fabric-runtime/fabric/internal/svgchart"
)

// configColours tell configs apart in the timeline (cycled past eight).
var configColours = []string{"#0b5cad", "#e08214", "#7b3294", "#1b7837", "#c51b7d", "#35978f", "#8c510a", "#4d4d4d"}

func configColour(i int) string { return configColours[i%len(configColours)] }

// span is one trial on the timeline: it holds its slot from begin (when
// it was admitted: timings.queued_ms) to end; its last attempt started at
// start, so begin..start is earlier attempts and their back-off.
type span struct {
	r                 *contract.BatchTrial
	config            int
	begin, start, end int64
	lane              int
}

// wait is the time from admission to the last attempt's start, in seconds.
func (s span) wait() float64 { return float64(s.start-s.begin) / 1000 }

// spans lists the records that ran (not skipped, with an end), sorted by
// begin, end and trial id, each with the lowest free lane: the lanes
// are the slots, and their number is the peak in flight.
func spans(m *model) []span {
	var out []span
	for ci, cfg := range m.configs {
		for _, task := range m.tasks {
			c := m.cells[cellKey{task, cfg}]
			if c == nil {
				continue
			}
			for _, r := range c.records {
				t := r.Timings
				if r.Outcome == contract.TrialSkipped || t.EndedMillis <= 0 {
					continue
				}
				start := t.StartedMillis
				if start <= 0 || start > t.EndedMillis {
					start = t.EndedMillis
				}
				begin := start
				if q := t.QueuedMillis; q > 0 && q < start {
					begin = q
				}
				out = append(out, span{r: r, config: ci, begin: begin, start: start, end: t.EndedMillis})
			}
		}
	}
	slices.SortFunc(out, func(a, b span) int {
		switch {
		case a.begin != b.begin:
			return cmp.Compare(a.begin, b.begin)
		case a.end != b.end:
			return cmp.Compare(a.end, b.end)
		}
		return cmp.Compare(a.r.TrialID, b.r.TrialID)
	})
	var laneEnd []int64
	for i := range out {
		lane := slices.IndexFunc(laneEnd, func(e int64) bool { return e <= out[i].begin })
		if lane < 0 {
			lane = len(laneEnd)
			laneEnd = append(laneEnd, 0)
		}
		laneEnd[lane] = out[i].end
		out[i].lane = lane
	}
	return out
}

// inFlight is the step function of trials holding a slot: at each time
// (ms), the count from then on. An end and a begin at the same instant do
// not overlap.
func inFlight(sp []span) (times []int64, counts []int, peak int) {
	type ev struct {
		at int64
		d  int
	}
	evs := make([]ev, 0, 2*len(sp))
	for _, s := range sp {
		evs = append(evs, ev{s.begin, 1}, ev{s.end, -1})
	}
	slices.SortFunc(evs, func(a, b ev) int {
		if a.at != b.at {
			return cmp.Compare(a.at, b.at)
		}
		return a.d - b.d // ends first
	})
	n := 0
	for _, e := range evs {
		n += e.d
		peak = max(peak, n)
		if len(times) > 0 && times[len(times)-1] == e.at {
			counts[len(counts)-1] = n
			continue
		}
		times, counts = append(times, e.at), append(counts, n)
	}
	return times, counts, peak
}

// timelineRow is one config's line of the timeline table.
type timelineRow struct {
	Config               string
	Trials               int
	FirstStart, LastEnd  string
	Peak                 int
	MedianWait, LongWait string
	Retried, RateLimited int
	Key                  string // the CSS class of its colour key
}

// timelineTable summarises each config's spans, then all of them (the
// last row, config "all").
func timelineTable(m *model, sp []span) []timelineRow {
	if len(sp) == 0 {
		return nil
	}
	t0 := sp[0].begin
	row := func(name, key string, list []span) timelineRow {
		r := timelineRow{Config: name, Key: key, Trials: len(list), FirstStart: "–", LastEnd: "–", MedianWait: "–", LongWait: "–"}
		if len(list) == 0 {
			return r
		}
		first, last := list[0].start, list[0].end
		waits := make([]float64, 0, len(list))
		for _, s := range list {
			first, last = min(first, s.start), max(last, s.end)
			waits = append(waits, s.wait())
			if s.r.Attempts > 1 {
				r.Retried++
			}
			if rateLimited(s.r) {
				r.RateLimited++
			}
		}
		_, _, r.Peak = inFlight(list)
		r.FirstStart, r.LastEnd = clock(float64(first-t0)/1000), clock(float64(last-t0)/1000)
		med, _ := batchstats.Quantile(waits, 0.5)
		r.MedianWait, r.LongWait = seconds(med), seconds(slices.Max(waits))
		return r
	}
	var rows []timelineRow
	for ci, cfg := range m.configs {
		var list []span
		for _, s := range sp {
			if s.config == ci {
				list = append(list, s)
			}
		}
		rows = append(rows, row(cfg, "c"+strconv.Itoa(ci%len(configColours)), list))
	}
	return append(rows, row("all", "", sp))
}

// rateLimited says whether an attempt of the trial was told to wait
// (an error with retry_after_seconds).
func rateLimited(r *contract.BatchTrial) bool {
	if r.Error != nil && r.Error.RetryAfterSeconds > 0 {
		return true
	}
	for _, h := range r.History {
		if h.Error != nil && h.Error.RetryAfterSeconds > 0 {
			return true
		}
	}
	return false
}

// seconds writes a duration in seconds for a table cell.
func seconds(v float64) string {
	if v >= 100 {
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64) + " s"
	}
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) + " s"
}

// clock writes an offset from the batch's start: seconds under ten
// minutes, else m:ss, else h:mm:ss.
func clock(sec float64) string {
	switch {
	case sec < 600:
		return "+" + seconds(sec)
	case sec < 3600:
		s := int(math.Round(sec))
		return fmt.Sprintf("+%d:%02d", s/60, s%60)
	default:
		s := int(math.Round(sec))
		return fmt.Sprintf("+%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
}

// outcomeColour colours a trial's bar.
func outcomeColour(r *contract.BatchTrial) string {
	switch r.Outcome {
	case contract.TrialPassed:
		return colPassed
	case contract.TrialFailed:
		if r.TimedOut {
			return colTimedOut
		}
		return colFailed
	case contract.TrialErrored:
		if r.Error != nil && errorShades[r.Error.Class] != "" {
			return errorShades[r.Error.Class]
		}
		return colError
	}
	return colCancelled
}

// attemptsTitle is the tooltip of a retried trial: what each earlier
// attempt ended with.
func attemptsTitle(s span) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d attempts, %s from admission to the last attempt's start", s.r.TrialID, s.r.Attempts, seconds(s.wait()))
	for _, h := range s.r.History {
		fmt.Fprintf(&b, "; attempt %d %s", h.Attempt, h.Outcome)
		if e := h.Error; e != nil {
			fmt.Fprintf(&b, " (%s: %s", e.Class, e.Code)
			if e.RetryAfterSeconds > 0 {
				fmt.Fprintf(&b, ", retry after %s", seconds(e.RetryAfterSeconds))
			}
			b.WriteString(")")
		}
	}
	return b.String()
}

// maxLanes is the most slots drawn one bar per trial; past it the lanes
// panel is left out (the counts above still show everything).
const maxLanes = 64

// timelineChart draws, over the batch's wall time: trials finished per
// config (cumulative steps), the number in flight, and a lane per slot
// with every trial's bar (dashed before its last attempt when retried,
// a ring where the last attempt started).
func timelineChart(m *model, sp []span) string {
	const w, left, right, top = 560, 44, 16, 10
	const finishedH, gap, flightH = 120, 26, 56
	if len(sp) == 0 {
		c := svgchart.New(w, 40, "timeline: no trial has run")
		c.Text(left, 20, "no trial has run yet", svgchart.TextStyle{Fill: colMuted})
		return c.String()
	}
	times, counts, peak := inFlight(sp)
	lanes := peak
	laneH := 0.0
	if lanes <= maxLanes {
		laneH = min(12, max(3, 150/float64(lanes)))
	}
	lanesTop := float64(top + finishedH + gap + flightH + gap)
	lanesH := laneH * float64(lanes)
	axisY := lanesTop + lanesH
	if laneH == 0 {
		axisY = float64(top + finishedH + gap + flightH)
	}
	legendY := axisY + 50
	h := int(legendY + 14 + 20*float64((len(m.configs)+3)/4))
	c := svgchart.New(w, h, "timeline: trials finished, in flight and each trial's slot over the batch's wall time")

	t0, t1 := sp[0].begin, sp[0].end
	for _, s := range sp {
		t1 = max(t1, s.end)
	}
	span := float64(t1-t0) / 1000
	unit, div := "s", 1.0
	if span >= 600 {
		unit, div = "min", 60
	}
	// The axis ends at the last end: ticks past it are dropped.
	ticks := slices.DeleteFunc(svgchart.NiceTicks(0, span/div, 6), func(t float64) bool { return t*div > span*1.0001 })
	x := svgchart.Linear{D0: 0, D1: max(span, 0.001) * 1000, R0: left, R1: w - right}
	at := func(ms int64) float64 { return x.Map(float64(ms - t0)) }
	for _, t := range ticks {
		px := x.Map(t * div * 1000)
		c.Line(px, top, px, axisY, svgchart.Style{Stroke: colGrid})
		c.Text(px, axisY+12, svgchart.FormatNumber(t)+" "+unit, svgchart.TextStyle{Anchor: svgchart.AnchorMiddle, Fill: colMuted, Size: 11})
	}

	// Finished, cumulative, per config.
	most := 0
	ends := make([][]int64, len(m.configs))
	for _, s := range sp {
		ends[s.config] = append(ends[s.config], s.end)
	}
	for _, e := range ends {
		most = max(most, len(e))
	}
	yt := svgchart.NiceTicks(0, float64(max(most, 1)), 4)
	yf := svgchart.Linear{D0: 0, D1: yt[len(yt)-1], R0: top + finishedH, R1: top}
	for _, t := range yt {
		c.Line(left, yf.Map(t), w-right, yf.Map(t), svgchart.Style{Stroke: colGrid})
		c.Text(left-6, yf.Map(t), svgchart.FormatNumber(t), svgchart.TextStyle{Anchor: svgchart.AnchorEnd, Fill: colMuted, Size: 11})
	}
	c.Text(left+4, top+6, "finished", svgchart.TextStyle{Fill: colMuted, Size: 11, Bold: true})
	for ci, e := range ends {
		if len(e) == 0 {
			continue
		}
		slices.Sort(e)
		pts := []float64{at(t0), yf.Map(0)}
		for i, end := range e {
			pts = append(pts, at(end), yf.Map(float64(i)), at(end), yf.Map(float64(i+1)))
		}
		pts = append(pts, at(t1), yf.Map(float64(len(e))))
		c.Polyline(pts, svgchart.Style{Stroke: configColour(ci), StrokeWidth: 2, Fill: "none"})
	}

	// In flight, all configs.
	fTop := float64(top + finishedH + gap)
	yi := svgchart.Linear{D0: 0, D1: float64(max(peak, 1)), R0: fTop + flightH, R1: fTop}
	c.Line(left, yi.Map(0), w-right, yi.Map(0), svgchart.Style{Stroke: colGrid})
	c.Line(left, yi.Map(float64(peak)), w-right, yi.Map(float64(peak)), svgchart.Style{Stroke: colGrid})
	c.Text(left-6, yi.Map(0), "0", svgchart.TextStyle{Anchor: svgchart.AnchorEnd, Fill: colMuted, Size: 11})
	c.Text(left-6, yi.Map(float64(peak)), strconv.Itoa(peak), svgchart.TextStyle{Anchor: svgchart.AnchorEnd, Fill: colMuted, Size: 11})
	area := []float64{at(times[0]), yi.Map(0)}
	prev := 0
	for i, t := range times {
		area = append(area, at(t), yi.Map(float64(prev)), at(t), yi.Map(float64(counts[i])))
		prev = counts[i]
	}
	area = append(area, at(times[len(times)-1]), yi.Map(0))
	c.Polyline(area, svgchart.Style{Fill: "#dbe7f5", Stroke: colAccent, StrokeWidth: 1.2})
	c.Text(left+4, fTop-8, fmt.Sprintf("in flight (peak %d)", peak), svgchart.TextStyle{Fill: colMuted, Size: 11, Bold: true})

	// One lane per slot, a bar per trial.
	if laneH > 0 {
		c.Text(left+4, lanesTop-8, "slots: a bar per trial, coloured by outcome", svgchart.TextStyle{Fill: colMuted, Size: 11, Bold: true})
		for _, s := range sp {
			y := lanesTop + laneH*float64(s.lane)
			title := fmt.Sprintf("%s: %s, %s", s.r.TrialID, s.r.Outcome, seconds(float64(s.end-s.start)/1000))
			if s.start > s.begin {
				c.Line(at(s.begin), y+laneH/2, at(s.start), y+laneH/2, svgchart.Style{Stroke: colError, StrokeWidth: max(1.5, laneH/3), Dash: "3 2"})
			}
			c.Rect(at(s.start), y+0.5, max(at(s.end)-at(s.start), 1), laneH-1, svgchart.Style{Fill: outcomeColour(s.r)}, title)
			if s.r.Attempts > 1 {
				c.Circle(at(s.start), y+laneH/2, max(2.5, laneH/2.5), svgchart.Style{Fill: "#ffffff", Stroke: colInk, StrokeWidth: 1.2}, attemptsTitle(s))
			}
		}
	}

	// Legend: configs, then the marks.
	for ci, cfg := range m.configs {
		lx := float64(left + (ci%4)*125)
		ly := legendY + float64(ci/4)*20
		c.Line(lx, ly, lx+14, ly, svgchart.Style{Stroke: configColour(ci), StrokeWidth: 3})
		c.Text(lx+19, ly, cfg, svgchart.TextStyle{Fill: colInk, Size: 11, MaxChars: 16})
	}
	ly := legendY - 22
	c.Line(left, ly, left+18, ly, svgchart.Style{Stroke: colError, StrokeWidth: 2, Dash: "3 2"})
	c.Circle(left+18, ly, 3, svgchart.Style{Fill: "#ffffff", Stroke: colInk, StrokeWidth: 1.2}, "")
	c.Text(left+26, ly, "retried: earlier attempts and back-off, then the last attempt's start", svgchart.TextStyle{Fill: colMuted, Size: 11})
	return c.String()
}

// phaseRow is one config's mean time per phase, in seconds.
type phaseRow struct {
	Config                   string
	N                        int
	Setup, Run, Grade, Other float64
}

// phases averages each config's setup, run and grade seconds over its
// trials that ran; other is what the duration has beyond the three.
func phases(m *model) []phaseRow {
	var rows []phaseRow
	for _, cfg := range m.configs {
		r := phaseRow{Config: cfg}
		var dur float64
		for _, task := range m.tasks {
			c := m.cells[cellKey{task, cfg}]
			if c == nil {
				continue
			}
			for _, t := range c.records {
				if t.Outcome == contract.TrialSkipped {
					continue
				}
				r.N++
				r.Setup += t.Timings.SetupSeconds
				r.Run += t.Timings.RunSeconds
				r.Grade += t.Timings.GradeSeconds
				dur += t.Timings.DurationSeconds
			}
		}
		if r.N > 0 {
			n := float64(r.N)
			r.Setup, r.Run, r.Grade, dur = r.Setup/n, r.Run/n, r.Grade/n, dur/n
			// Below 1% of the duration, the rest is rounding.
			if rest := dur - r.Setup - r.Run - r.Grade; rest > 0.01*dur {
				r.Other = rest
			}
		}
		rows = append(rows, r)
	}
	return rows
}

var phaseColours = []string{"#9ecae1", "#3182bd", "#fdae6b", "#cfcfcf"}

// phaseChart stacks each config's mean setup, run, grade (and other)
// seconds in one bar.
func phaseChart(rows []phaseRow) string {
	const w, left, right, rowH, top = 560, 170, 24, 26, 8
	h := top + rowH*len(rows) + 52
	c := svgchart.New(w, h, "mean seconds per phase per config")
	hi := 0.0
	for _, r := range rows {
		hi = max(hi, r.Setup+r.Run+r.Grade+r.Other)
	}
	ticks := svgchart.NiceTicks(0, hi, 5)
	x := svgchart.Linear{D0: 0, D1: ticks[len(ticks)-1], R0: left, R1: w - right}
	bottom := float64(top + rowH*len(rows))
	xAxis(c, x, ticks, top, bottom, func(v float64) string { return svgchart.FormatNumber(v) + " s" })
	names := []string{"setup", "run", "grade", "other"}
	for i, r := range rows {
		y := float64(top + rowH*i)
		c.Text(left-10, y+rowH/2, r.Config, svgchart.TextStyle{Anchor: svgchart.AnchorEnd, MaxChars: labelChars, Fill: colInk})
		at := 0.0
		for k, v := range []float64{r.Setup, r.Run, r.Grade, r.Other} {
			if v <= 0 {
				continue
			}
			x0, x1 := x.Map(at), x.Map(at+v)
			c.Rect(x0, y+4, x1-x0, rowH-8, svgchart.Style{Fill: phaseColours[k], Stroke: "#ffffff"},
				fmt.Sprintf("%s %s: mean %s over %d trials", r.Config, names[k], seconds(v), r.N))
			at += v
		}
	}
	ly := bottom + 36
	for k, name := range names {
		lx := float64(left + k*90)
		c.Rect(lx, ly-6, 12, 12, svgchart.Style{Fill: phaseColours[k]}, "")
		c.Text(lx+16, ly, name, svgchart.TextStyle{Fill: colMuted, Size: 11})
	}
	return c.String()
}
