package batchreport

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/fabric-runtime/fabric/contract"
)

const pageCSS = `
:root{--ink:#1f2328;--muted:#656d76;--line:#d8dee4;--pass:#1a9850;--fail:#d73027;--err:#b86e00;--bg:#f6f8fa}
*{box-sizing:border-box}
body{margin:0;padding:24px 32px 48px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--ink);max-width:1400px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:18px;margin:32px 0 4px;padding-top:12px;border-top:1px solid var(--line)}
p.note{color:var(--muted);margin:2px 0 12px;max-width:900px}
.meta{display:grid;grid-template-columns:repeat(auto-fill,minmax(220px,1fr));gap:6px 24px;margin:12px 0;padding:12px 16px;background:var(--bg);border-radius:8px}
.meta div{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}.meta .full{grid-column:1/-1;white-space:normal}.meta b{color:var(--muted);font-weight:500;margin-right:6px}
.gate-met{color:var(--pass);font-weight:600}.gate-missed{color:var(--fail);font-weight:600}
.pair{display:flex;flex-wrap:wrap;gap:16px 28px;align-items:flex-start}
.pair figure{margin:0;flex:0 1 auto;min-width:0}.pair .charts{display:flex;flex-direction:column;gap:8px;flex:0 1 auto;min-width:0}
.pair .tbl{flex:0 1 auto;min-width:0;max-width:100%;overflow-x:auto}
table{border-collapse:collapse;font-variant-numeric:tabular-nums;font-size:13px}
th,td{padding:4px 8px;border-bottom:1px solid var(--line);text-align:right;white-space:nowrap}
th{font-weight:600;color:var(--muted);font-size:12px;line-height:1.25;vertical-align:bottom;white-space:normal;background:#fff;position:sticky;top:0}
th[data-sort]{cursor:pointer}th[data-sort]:hover{color:var(--ink)}
td.name,th.name{text-align:left;max-width:220px;overflow:hidden;text-overflow:ellipsis}
.ci{color:var(--muted);font-size:11px}.err{color:var(--err);font-weight:600}.pass{color:var(--pass)}.fail{color:var(--fail)}
.sub{display:block;color:var(--muted);font-size:11px;font-weight:400;line-height:1.2}
td.wrap{white-space:normal;max-width:110px}
.wide{overflow-x:auto;max-width:100%}
#leaderboard-table th,#leaderboard-table td{padding:4px 6px}#leaderboard-table th{max-width:92px}
#leaderboard-table .ci{display:block;line-height:1.2}
tr.total td{font-weight:600;border-top:1.5px solid var(--muted)}
.key{display:inline-block;width:12px;height:3px;margin:0 6px 3px 0;vertical-align:middle}
.key.c0{background:#0b5cad}.key.c1{background:#e08214}.key.c2{background:#7b3294}.key.c3{background:#1b7837}.key.c4{background:#c51b7d}.key.c5{background:#35978f}.key.c6{background:#8c510a}.key.c7{background:#4d4d4d}
a{color:#0b5cad;text-decoration:none}a:hover{text-decoration:underline}
svg{display:block;max-width:100%;height:auto;font:12px system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
svg .cell:hover{stroke:#1f2328;stroke-width:1.5}
@media (max-width:900px){body{padding:16px}td{white-space:normal}td.name,th.name{max-width:150px}}
`

// pageJS sorts a table by a clicked header (numbers by their data-v).
const pageJS = `
document.querySelectorAll('table.sortable').forEach(function (t) {
  t.querySelectorAll('th[data-sort]').forEach(function (th, i) {
    th.addEventListener('click', function () {
      var body = t.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      var col = th.cellIndex, asc = th.dataset.dir !== 'asc';
      rows.sort(function (a, b) {
        var x = a.cells[col].dataset.v || a.cells[col].textContent, y = b.cells[col].dataset.v || b.cells[col].textContent;
        var nx = parseFloat(x), ny = parseFloat(y);
        var c = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
        return asc ? c : -c;
      });
      th.dataset.dir = asc ? 'asc' : 'desc';
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
`

func cspHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// csp allows nothing but the page's own style and script.
var csp = "default-src 'none'; style-src " + cspHash(pageCSS) + "; script-src " + cspHash(pageJS) + "; img-src 'none'; base-uri 'none'; form-action 'none'"

var pageTemplate = template.Must(template.New("index").Funcs(template.FuncMap{
	"pct":   fmtPct,
	"pctp":  func(p *float64) string { return fmtPctPtr(p) },
	"num":   fmtNum,
	"tok":   fmtTokens,
	"usd":   fmtUSD,
	"pv":    func(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) },
	"secs":  seconds,
	"vpct":  func(p *float64) string { return sortKey(p) },
	"trial": trialHref,
	"cell":  func(t contract.BatchTaskSummary, c string) contract.BatchTaskCell { return t.PerConfig[c] },
	"has":   func(t contract.BatchTaskSummary, c string) bool { _, ok := t.PerConfig[c]; return ok },
}).Parse(pageHTML))

// fmtNum writes a figure with 4 significant digits, never in exponent
// form.
func fmtNum(v float64) string {
	if math.Abs(v) >= 1e4 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// fmtTokens writes a token count compactly: 925, 14.3k, 1.42M.
func fmtTokens(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 3, 64) + "M"
	case a >= 1e3:
		return strconv.FormatFloat(v/1e3, 'g', 3, 64) + "k"
	}
	return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
}

func fmtPct(v float64) string { return strconv.FormatFloat(v*100, 'f', 1, 64) + "%" }

func fmtPctPtr(p *float64) string {
	if p == nil {
		return "–"
	}
	return fmtPct(*p)
}

func sortKey(p *float64) string {
	if p == nil {
		return "-1"
	}
	return strconv.FormatFloat(*p, 'g', -1, 64)
}

func fmtUSD(p *float64) string {
	if p == nil {
		return "–"
	}
	switch v := *p; {
	case v >= 100:
		return "$" + strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 1:
		return "$" + strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return "$" + strconv.FormatFloat(v, 'g', 3, 64)
	}
}

// trialHref is a trial directory relative to report/.
func trialHref(t *contract.BatchTrial) string {
	return cellHref(t.Task, t.Config) + fmt.Sprintf("r%02d/", t.Repeat)
}

// pageData is what the template draws.
type pageData struct {
	CSS       template.CSS
	JS        template.JS
	CSP       string
	S         *contract.BatchSummary
	Start     string
	End       string
	Charts    map[string]template.HTML
	CostLabel string
	Tasks     []contract.BatchTaskSummary
	Trials    map[string][]*contract.BatchTrial // by task
	Configs   []string
	Timeline  []timelineRow
	Phases    []phaseRow
}

func utc(ms int64) string {
	if ms == 0 {
		return "–"
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05Z")
}

func (m *model) page(s *contract.BatchSummary) ([]byte, error) {
	cost, costLabel := costChart(s)
	sp := spans(m)
	ph := phases(m)
	d := pageData{
		CSS: template.CSS(pageCSS), JS: template.JS(pageJS), CSP: csp, S: s,
		Start: utc(s.StartedMillis), End: utc(s.EndedMillis),
		Charts: map[string]template.HTML{
			"pass":     template.HTML(passRateChart(s)),
			"heat":     template.HTML(heatmap(s)),
			"latency":  template.HTML(latencyChart(m, s)),
			"cost":     template.HTML(cost),
			"outcomes": template.HTML(outcomeChart(m, s)),
			"timeline": template.HTML(timelineChart(m, sp)),
			"phases":   template.HTML(phaseChart(ph)),
		},
		Timeline:  timelineTable(m, sp),
		Phases:    ph,
		CostLabel: costLabel,
		Tasks:     taskOrder(s),
		Trials:    map[string][]*contract.BatchTrial{},
		Configs:   m.configs,
	}
	for _, task := range m.tasks {
		for _, cfg := range m.configs {
			if c := m.cells[cellKey{task, cfg}]; c != nil {
				d.Trials[task] = append(d.Trials[task], c.records...)
			}
		}
	}
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, d); err != nil {
		return nil, fmt.Errorf("batchreport: render index.html: %w", err)
	}
	return buf.Bytes(), nil
}

// Write builds the report and writes summary.json, trials.csv, tasks.csv
// and index.html into dir (created if missing).
func Write(dir string, in Input) error {
	m, err := newModel(in)
	if err != nil {
		return err
	}
	s, err := m.summary()
	if err != nil {
		return err
	}
	summary, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("batchreport: encode summary: %w", err)
	}
	summary = append(summary, '\n')
	records := make([]*contract.BatchTrial, 0, len(in.Trials))
	for i := range in.Trials {
		records = append(records, &in.Trials[i])
	}
	slices.SortFunc(records, func(a, b *contract.BatchTrial) int { return cmp.Compare(a.TrialID, b.TrialID) })
	var trials, tasks bytes.Buffer
	if err := WriteTrialsCSV(&trials, records); err != nil {
		return fmt.Errorf("batchreport: trials.csv: %w", err)
	}
	if err := writeTasksCSV(&tasks, s); err != nil {
		return fmt.Errorf("batchreport: tasks.csv: %w", err)
	}
	html, err := m.page(s)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("batchreport: %w", err)
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{"summary.json", summary}, {"trials.csv", trials.Bytes()}, {"tasks.csv", tasks.Bytes()}, {"index.html", html}} {
		if err := writeAtomic(filepath.Join(dir, f.name), f.data); err != nil {
			return fmt.Errorf("batchreport: %w", err)
		}
	}
	return nil
}

// writeAtomic writes data to path by rename, so a reader never sees half
// a file.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
