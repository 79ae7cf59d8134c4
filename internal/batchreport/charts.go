package batchreport

import (
	"cmp"
	"fmt"
	"math"
	"net/url"
	"slices"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/batchstats"
	"github.com/fabric-runtime/fabric/internal/svgchart"
)

// Colours of outcomes and marks.
const (
	colPassed    = "#1a9850"
	colFailed    = "#d73027"
	colTimedOut  = "#f46d43"
	colError     = "#f0a202"
	colCancelled = "#8c8c8c"
	colPending   = "#cfcfcf"
	colInk       = "#1f2328"
	colMuted     = "#656d76"
	colGrid      = "#e6e8eb"
	colAccent    = "#0b5cad"
)

var errorShades = map[string]string{
	contract.ErrorClassModel:   "#f0a202",
	contract.ErrorClassHarness: "#d98c00",
	contract.ErrorClassSetup:   "#f7c55c",
	contract.ErrorClassGrader:  "#b86e00",
	contract.ErrorClassFabric:  "#ffd98a",
}

var passScale = svgchart.Sequential{
	Lo:  svgchart.RGB{R: 0xf4, G: 0xa5, B: 0x82},
	Mid: svgchart.RGB{R: 0xf7, G: 0xf7, B: 0xf7},
	Hi:  svgchart.RGB{R: 0x1a, G: 0x98, B: 0x50},
}

const labelChars = 22 // left-axis labels are cut at this many characters

// xAxis draws vertical grid lines and tick labels of x under the plot.
func xAxis(c *svgchart.Canvas, x svgchart.Linear, ticks []float64, top, bottom float64, format func(float64) string) {
	for _, t := range ticks {
		px := x.Map(t)
		c.Line(px, top, px, bottom, svgchart.Style{Stroke: colGrid})
		c.Text(px, bottom+12, format(t), svgchart.TextStyle{Anchor: svgchart.AnchorMiddle, Fill: colMuted, Size: 11})
	}
}

func pct(v float64) string { return svgchart.FormatNumber(math.Round(v*1000)/10) + "%" }

// passRateChart is pass@1 per config with its interval: a filled dot for
// the strict figure with its whisker, a ring for the scored one.
func passRateChart(s *contract.BatchSummary) string {
	const left, right, rowH, top = 170, 24, 30, 12
	w := 560
	h := top + rowH*len(s.Configs) + 44
	c := svgchart.New(w, h, "pass@1 per config with its confidence interval")
	x := svgchart.Linear{D0: 0, D1: 1, R0: left, R1: float64(w - right)}
	bottom := float64(top + rowH*len(s.Configs))
	xAxis(c, x, svgchart.NiceTicks(0, 1, 5), top, bottom, pct)
	for i, cs := range s.Configs {
		y := float64(top + rowH*i + rowH/2)
		c.Text(left-10, y, cs.Config, svgchart.TextStyle{Anchor: svgchart.AnchorEnd, MaxChars: labelChars, Fill: colInk})
		p := cs.PassAt1
		if p.CILow != nil && p.CIHigh != nil {
			c.Line(x.Map(*p.CILow), y, x.Map(*p.CIHigh), y, svgchart.Style{Stroke: colAccent, StrokeWidth: 2})
			for _, e := range []float64{*p.CILow, *p.CIHigh} {
				c.Line(x.Map(e), y-5, x.Map(e), y+5, svgchart.Style{Stroke: colAccent, StrokeWidth: 2})
			}
		}
		if p.Scored != nil {
			c.Circle(x.Map(*p.Scored), y, 5, svgchart.Style{Fill: "#ffffff", Stroke: colAccent, StrokeWidth: 2},
				fmt.Sprintf("%s scored-only pass@1 %s (%d scored)", cs.Config, pct(*p.Scored), cs.Scored))
		}
		if p.Strict != nil {
			c.Circle(x.Map(*p.Strict), y, 5.5, svgchart.Style{Fill: colAccent},
				fmt.Sprintf("%s pass@1 %s [%s, %s] over %d planned", cs.Config, pct(*p.Strict), pct(deref(p.CILow)), pct(deref(p.CIHigh)), cs.Planned))
		}
	}
	ly := bottom + 32
	c.Circle(left, ly, 5.5, svgchart.Style{Fill: colAccent}, "")
	c.Text(left+10, ly, fmt.Sprintf("strict (over planned) with %g%% %s CI", s.CI.Level*100, s.CI.Method), svgchart.TextStyle{Fill: colMuted, Size: 11})
	c.Circle(left+300, ly, 5, svgchart.Style{Fill: "#ffffff", Stroke: colAccent, StrokeWidth: 2}, "")
	c.Text(left+310, ly, "scored only", svgchart.TextStyle{Fill: colMuted, Size: 11})
	return c.String()
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// taskOrder sorts tasks hardest first: by mean scored pass fraction over
// configs, then by id.
func taskOrder(s *contract.BatchSummary) []contract.BatchTaskSummary {
	type scoredTask struct {
		t    contract.BatchTaskSummary
		mean float64
	}
	list := make([]scoredTask, 0, len(s.Tasks))
	for _, t := range s.Tasks {
		sum, n := 0.0, 0
		for _, c := range t.PerConfig {
			if c.Trials > 0 {
				sum += float64(c.Passes) / float64(c.Trials)
				n++
			}
		}
		mean := 2.0 // nothing scored: last
		if n > 0 {
			mean = sum / float64(n)
		}
		list = append(list, scoredTask{t, mean})
	}
	slices.SortStableFunc(list, func(a, b scoredTask) int {
		if a.mean != b.mean {
			if a.mean < b.mean {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.t.Task, b.t.Task)
	})
	out := make([]contract.BatchTaskSummary, len(list))
	for i, l := range list {
		out[i] = l.t
	}
	return out
}

// cellHref links a task and config's trial directories, relative to
// report/.
func cellHref(task, config string) string {
	return "../trials/" + url.PathEscape(task) + "/" + url.PathEscape(config) + "/"
}

// heatmap is the task x config grid of passes/scored trials.
func heatmap(s *contract.BatchSummary) string {
	const left, top, cellW, cellH = 190, 36, 100, 26
	tasks := taskOrder(s)
	w := max(left+cellW*len(s.Configs)+16, left+290) // room for the legend
	h := top + cellH*len(tasks) + 58
	c := svgchart.New(w, h, "passes per task and config")
	for j, cs := range s.Configs {
		c.Text(float64(left+cellW*j+cellW/2), top-14, cs.Config, svgchart.TextStyle{Anchor: svgchart.AnchorMiddle, MaxChars: 13, Fill: colInk, Bold: true})
	}
	for i, t := range tasks {
		y := float64(top + cellH*i)
		c.Text(left-10, y+cellH/2, t.Task, svgchart.TextStyle{Anchor: svgchart.AnchorEnd, MaxChars: labelChars, Fill: colInk})
		for j, cs := range s.Configs {
			x := float64(left + cellW*j)
			cell, ok := t.PerConfig[cs.Config]
			if !ok {
				continue
			}
			fill := svgchart.RGB{R: 0xcf, G: 0xcf, B: 0xcf}
			if cell.Trials > 0 {
				fill = passScale.At(float64(cell.Passes) / float64(cell.Trials))
			}
			text := fmt.Sprintf("%d/%d", cell.Passes, cell.Trials)
			if cell.Errors > 0 {
				text += " !"
			}
			title := fmt.Sprintf("%s × %s: %d passed of %d scored, %d errors, %d pending (%d planned)",
				t.Task, cs.Config, cell.Passes, cell.Trials, cell.Errors, cell.Pending, cell.Planned)
			ink := colInk
			if fill.Luminance() < 0.3 {
				ink = "#ffffff"
			}
			c.Link(cellHref(t.Task, cs.Config), func() {
				c.Rect(x+1, y+1, cellW-2, cellH-2, svgchart.Style{Fill: fill.Hex(), Class: "cell"}, title)
				c.Text(x+cellW/2, y+cellH/2, text, svgchart.TextStyle{Anchor: svgchart.AnchorMiddle, Fill: ink, Size: 12, Bold: cell.Errors > 0})
			})
		}
	}
	ly := float64(top + cellH*len(tasks) + 20)
	for i, v := range []float64{0, 0.5, 1} {
		c.Rect(float64(left+i*90), ly-7, 14, 14, svgchart.Style{Fill: passScale.At(v).Hex()}, "")
		c.Text(float64(left+i*90+20), ly, pct(v)+" pass", svgchart.TextStyle{Fill: colMuted, Size: 11})
	}
	c.Text(float64(left), ly+20, "“!” a trial errored · grey: nothing scored", svgchart.TextStyle{Fill: colMuted, Size: 11})
	return c.String()
}

// durations lists a config's trial durations (records not skipped).
func durations(m *model, cfg string) []float64 {
	var out []float64
	for _, task := range m.tasks {
		if c := m.cells[cellKey{task, cfg}]; c != nil {
			for _, r := range c.records {
				if r.Outcome != contract.TrialSkipped {
					out = append(out, r.Timings.DurationSeconds)
				}
			}
		}
	}
	return out
}

// latencyChart is a box (quartiles, median, whiskers to min and max) over
// a strip of every trial's duration, per config.
func latencyChart(m *model, s *contract.BatchSummary) string {
	const left, right, rowH, top = 170, 24, 40, 12
	w := 560
	h := top + rowH*len(s.Configs) + 30
	c := svgchart.New(w, h, "trial duration per config")
	hi := 0.0
	for _, cs := range s.Configs {
		for _, d := range durations(m, cs.Config) {
			hi = max(hi, d)
		}
	}
	ticks := svgchart.NiceTicks(0, hi, 5)
	x := svgchart.Linear{D0: 0, D1: ticks[len(ticks)-1], R0: left, R1: float64(w - right)}
	bottom := float64(top + rowH*len(s.Configs))
	xAxis(c, x, ticks, top, bottom, func(v float64) string { return svgchart.FormatNumber(v) + " s" })
	for i, cs := range s.Configs {
		y := float64(top + rowH*i + rowH/2)
		c.Text(left-10, y, cs.Config, svgchart.TextStyle{Anchor: svgchart.AnchorEnd, MaxChars: labelChars, Fill: colInk})
		ds := durations(m, cs.Config)
		if len(ds) == 0 {
			continue
		}
		q := func(p float64) float64 { v, _ := batchstats.Quantile(ds, p); return v }
		lo, q1, med, q3, top := slices.Min(ds), q(0.25), q(0.5), q(0.75), slices.Max(ds)
		st := svgchart.Style{Stroke: colMuted, StrokeWidth: 1.5}
		c.Line(x.Map(lo), y, x.Map(q1), y, st)
		c.Line(x.Map(q3), y, x.Map(top), y, st)
		c.Rect(x.Map(q1), y-10, x.Map(q3)-x.Map(q1), 20, svgchart.Style{Fill: "#dbe7f5", Stroke: colAccent},
			fmt.Sprintf("%s: median %s s, quartiles %s–%s s, range %s–%s s (%d trials)", cs.Config,
				svgchart.FormatNumber(med), svgchart.FormatNumber(q1), svgchart.FormatNumber(q3), svgchart.FormatNumber(lo), svgchart.FormatNumber(top), len(ds)))
		c.Line(x.Map(med), y-10, x.Map(med), y+10, svgchart.Style{Stroke: colAccent, StrokeWidth: 2.5})
		for k, d := range ds {
			// A fixed jitter from the index keeps the strip deterministic.
			jy := y + float64((k*7)%9-4)*1.6
			c.Circle(x.Map(d), jy, 2.2, svgchart.Style{Fill: colInk, Opacity: 0.45}, "")
		}
	}
	return c.String()
}

// costPoint is one config on the cost (or tokens) vs pass rate scatter.
type costPoint struct {
	config string
	x, y   float64
}

// costChart plots strict pass@1 against cost per trial, or tokens per
// trial when no config has a cost, with the Pareto frontier (no other
// config is both cheaper and better).
func costChart(s *contract.BatchSummary) (svg, xLabel string) {
	var pts []costPoint
	useCost := false
	for _, cs := range s.Configs {
		if cs.CostUSD.PerTrial != nil {
			useCost = true
		}
	}
	xLabel = "tokens per trial (input + output)"
	if useCost {
		xLabel = "cost per trial (USD)"
	}
	for _, cs := range s.Configs {
		if cs.PassAt1.Strict == nil {
			continue
		}
		var v float64
		switch {
		case useCost && cs.CostUSD.PerTrial != nil:
			v = *cs.CostUSD.PerTrial
		case !useCost && cs.Tokens != nil:
			v = cs.Tokens.Input + cs.Tokens.Output
		default:
			continue
		}
		pts = append(pts, costPoint{cs.Config, v, *cs.PassAt1.Strict})
	}
	const left, right, top, bottomPad = 56, 130, 14, 44
	w, h := 560, 300
	c := svgchart.New(w, h, "pass@1 against "+xLabel)
	hi := 0.0
	for _, p := range pts {
		hi = max(hi, p.x)
	}
	xt := svgchart.NiceTicks(0, hi, 5)
	x := svgchart.Linear{D0: 0, D1: xt[len(xt)-1], R0: left, R1: float64(w - right)}
	y := svgchart.Linear{D0: 0, D1: 1, R0: float64(h - bottomPad), R1: top}
	xAxis(c, x, xt, top, float64(h-bottomPad), svgchart.FormatNumber)
	for _, t := range svgchart.NiceTicks(0, 1, 5) {
		c.Line(left, y.Map(t), float64(w-right), y.Map(t), svgchart.Style{Stroke: colGrid})
		c.Text(left-6, y.Map(t), pct(t), svgchart.TextStyle{Anchor: svgchart.AnchorEnd, Fill: colMuted, Size: 11})
	}
	c.Text(float64(left+(w-right-left)/2), float64(h-12), xLabel, svgchart.TextStyle{Anchor: svgchart.AnchorMiddle, Fill: colMuted, Size: 11})
	// Pareto frontier: sorted by x, keep each point better than all cheaper.
	sorted := slices.Clone(pts)
	slices.SortStableFunc(sorted, func(a, b costPoint) int {
		switch {
		case a.x != b.x:
			return cmp.Compare(a.x, b.x)
		default:
			return cmp.Compare(b.y, a.y)
		}
	})
	var line []float64
	best := -1.0
	for _, p := range sorted {
		if p.y > best {
			best = p.y
			line = append(line, x.Map(p.x), y.Map(p.y))
		}
	}
	if len(line) >= 4 {
		c.Polyline(line, svgchart.Style{Stroke: colAccent, StrokeWidth: 1.5, Fill: "none", Class: "frontier"})
	}
	for _, p := range pts {
		c.Circle(x.Map(p.x), y.Map(p.y), 6, svgchart.Style{Fill: colAccent},
			fmt.Sprintf("%s: pass@1 %s at %s %s", p.config, pct(p.y), svgchart.FormatNumber(p.x), xLabel))
		c.Text(x.Map(p.x)+9, y.Map(p.y), p.config, svgchart.TextStyle{Fill: colInk, Size: 12, MaxChars: 16})
	}
	return c.String(), xLabel
}

// outcomeCategory is one segment of the outcome bars.
type outcomeCategory struct {
	name, colour string
	count        func(cs contract.BatchConfigSummary) int
}

func outcomeCategories(m *model, s *contract.BatchSummary) []outcomeCategory {
	failedTO := map[string]int{}
	for _, c := range m.cells {
		for _, r := range c.records {
			if r.Outcome == contract.TrialFailed && r.TimedOut {
				failedTO[r.Config]++
			}
		}
	}
	failedTimedOut := func(cs contract.BatchConfigSummary) int { return failedTO[cs.Config] }
	cats := []outcomeCategory{
		{"passed", colPassed, func(cs contract.BatchConfigSummary) int { return cs.Passed }},
		{"failed", colFailed, func(cs contract.BatchConfigSummary) int { return cs.Failed - failedTimedOut(cs) }},
		{"failed: timed out", colTimedOut, failedTimedOut},
	}
	classes := []string{contract.ErrorClassModel, contract.ErrorClassHarness, contract.ErrorClassSetup, contract.ErrorClassGrader, contract.ErrorClassFabric}
	for _, cs := range s.Configs {
		for class := range cs.Errors {
			if !slices.Contains(classes, class) {
				classes = append(classes, class)
			}
		}
	}
	for _, class := range classes {
		colour := errorShades[class]
		if colour == "" {
			colour = colError
		}
		cats = append(cats, outcomeCategory{"error: " + class, colour, func(cs contract.BatchConfigSummary) int { return cs.Errors[class] }})
	}
	cats = append(cats,
		outcomeCategory{"cancelled", colCancelled, func(cs contract.BatchConfigSummary) int { return cs.Cancelled }},
		outcomeCategory{"skipped", "#b0b0b0", func(cs contract.BatchConfigSummary) int { return cs.Skipped }},
		outcomeCategory{"pending", colPending, func(cs contract.BatchConfigSummary) int { return cs.Pending }},
	)
	// Keep only categories some config has.
	return slices.DeleteFunc(cats, func(oc outcomeCategory) bool {
		for _, cs := range s.Configs {
			if oc.count(cs) > 0 {
				return false
			}
		}
		return true
	})
}

// outcomeChart stacks each config's planned trials by outcome.
func outcomeChart(m *model, s *contract.BatchSummary) string {
	cats := outcomeCategories(m, s)
	const left, right, rowH, top = 170, 24, 30, 12
	w := 560
	legendRows := (len(cats) + 3) / 4
	h := top + rowH*len(s.Configs) + 12 + 20*legendRows
	c := svgchart.New(w, h, "trial outcomes per config")
	for i, cs := range s.Configs {
		y := float64(top + rowH*i)
		c.Text(left-10, y+rowH/2, cs.Config, svgchart.TextStyle{Anchor: svgchart.AnchorEnd, MaxChars: labelChars, Fill: colInk})
		if cs.Planned == 0 {
			continue
		}
		x := svgchart.Linear{D0: 0, D1: float64(cs.Planned), R0: left, R1: float64(w - right)}
		at := 0
		for _, oc := range cats {
			n := oc.count(cs)
			if n == 0 {
				continue
			}
			x0, x1 := x.Map(float64(at)), x.Map(float64(at+n))
			c.Rect(x0, y+4, x1-x0, rowH-8, svgchart.Style{Fill: oc.colour, Stroke: "#ffffff"}, fmt.Sprintf("%s %s: %d of %d", cs.Config, oc.name, n, cs.Planned))
			if x1-x0 > 22 {
				c.Text((x0+x1)/2, y+rowH/2, fmt.Sprint(n), svgchart.TextStyle{Anchor: svgchart.AnchorMiddle, Fill: "#ffffff", Size: 11, Bold: true})
			}
			at += n
		}
	}
	for i, oc := range cats {
		lx := float64(24 + (i%4)*130)
		ly := float64(top+rowH*len(s.Configs)+14) + float64(i/4)*20
		c.Rect(lx, ly-6, 12, 12, svgchart.Style{Fill: oc.colour}, "")
		c.Text(lx+16, ly, oc.name, svgchart.TextStyle{Fill: colMuted, Size: 11, MaxChars: 18})
	}
	return c.String()
}

// svgIDs lists the charts by element id, for the page and its tests.
var svgIDs = []string{"chart-pass-rate", "chart-heatmap", "chart-latency", "chart-phases", "chart-cost", "chart-outcomes", "chart-timeline"}
