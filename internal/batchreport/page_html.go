package batchreport

const pageHTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{.CSP}}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.S.Batch}} · fabric batch report</title>
<style>{{.CSS}}</style></head>
<body>
<header id="header">
<h1>{{.S.Batch}}</h1>
<p class="note">fabric batch report · {{len .S.Configs}} configs × {{len .S.Tasks}} tasks × {{.S.Repeats}} repeats</p>
<div class="meta">
<div><b>spec digest</b><span title="{{.S.SpecDigest}}">{{.S.SpecDigest}}</span></div>
<div><b>fabric</b>{{.S.FabricVersion}}</div>
<div><b>harnesses</b>{{range $i, $h := .S.Harnesses}}{{if $i}}, {{end}}{{$h}}{{else}}–{{end}}</div>
<div><b>adapters</b>{{range $i, $h := .S.Adapters}}{{if $i}}, {{end}}{{$h}}{{else}}–{{end}}</div>
<div><b>models</b>{{range $i, $h := .S.Models}}{{if $i}}, {{end}}{{$h}}{{else}}–{{end}}</div>
<div><b>started</b>{{.Start}}</div>
<div><b>ended</b>{{.End}}</div>
<div><b>wall time</b>{{num .S.WallSeconds}} s</div>
<div><b>planned</b>{{.S.Totals.Planned}}</div>
<div><b>scored</b>{{.S.Totals.Scored}} ({{.S.Totals.Passed}} passed, {{.S.Totals.Failed}} failed)</div>
<div><b>errored</b>{{.S.Totals.Errored}}</div>
<div><b>cancelled / skipped</b>{{.S.Totals.Cancelled}} / {{.S.Totals.Skipped}}</div>
<div><b>pending</b>{{.S.Totals.Pending}}</div>
<div class="full"><b>completion</b>{{pct .S.Completion.Fraction}} of planned scored, gate {{pct .S.Completion.Gate}}:
{{if .S.Completion.Met}}<span class="gate-met">met</span>{{else}}<span class="gate-missed">not met</span>{{end}}</div>
</div>
</header>

<h2 id="leaderboard">Leaderboard</h2>
<p class="note">pass@1 is the mean over tasks of each task's pass fraction. <b>strict</b> counts errors, cancelled, skipped and pending trials as failures over the planned trials; <b>scored</b> uses scored trials only. Intervals: {{.S.CI.Method}} at {{pct .S.CI.Level}}{{if .S.CI.Resamples}} ({{.S.CI.Resamples}} task resamples, seed {{.S.CI.Seed}}){{end}}.</p>
<div class="wide"><table class="sortable" id="leaderboard-table">
<thead><tr><th class="name" data-sort>config</th><th data-sort>pass@1 strict</th><th data-sort>pass@1 scored</th>
{{range .S.K}}<th data-sort>pass@{{.}}</th><th data-sort>pass^{{.}}</th>{{end}}
<th data-sort>tasks</th><th data-sort>planned</th><th data-sort>scored</th><th data-sort>errors</th><th data-sort>timeouts</th><th data-sort>retries</th>
<th data-sort>p50 s</th><th data-sort>p90 s</th><th data-sort>tokens in / out</th><th data-sort>cost / trial</th><th data-sort>cost / pass</th></tr></thead>
<tbody>{{range .S.Configs}}{{$c := .}}<tr>
<td class="name" title="{{.Config}}">{{.Config}}</td>
<td data-v="{{vpct .PassAt1.Strict}}"><b>{{pctp .PassAt1.Strict}}</b> <span class="ci">[{{pctp .PassAt1.CILow}}, {{pctp .PassAt1.CIHigh}}]</span></td>
<td data-v="{{vpct .PassAt1.Scored}}">{{pctp .PassAt1.Scored}} <span class="ci">[{{pctp .PassAt1.ScoredCILow}}, {{pctp .PassAt1.ScoredCIHigh}}]</span></td>
{{range $.S.K}}{{$k := printf "%d" .}}<td>{{with index $c.PassAtK $k}}{{pct .}}{{else}}–{{end}}</td><td>{{with index $c.PassHatK $k}}{{pct .}}{{else}}–{{end}}</td>{{end}}
<td>{{.Tasks}}</td><td>{{.Planned}}</td><td>{{.Scored}}</td>
<td data-v="{{.Errored}}">{{if .Errored}}<span class="err">{{.Errored}}</span> <span class="ci">{{range $k, $v := .Errors}}{{$k}}:{{$v}} {{end}}</span>{{else}}0{{end}}</td>
<td>{{.TimedOut}}</td><td>{{.Retries}}</td>
<td>{{with .DurationS}}{{num .P50}}{{else}}–{{end}}</td><td>{{with .DurationS}}{{num .P90}}{{else}}–{{end}}</td>
<td>{{with .Tokens}}{{num .Input}} / {{num .Output}}{{else}}–{{end}}</td>
<td data-v="{{vpct .CostUSD.PerTrial}}">{{usd .CostUSD.PerTrial}}</td><td data-v="{{vpct .CostUSD.PerPass}}">{{usd .CostUSD.PerPass}}</td>
</tr>{{end}}</tbody></table></div>

<h2 id="pass-rate">Pass rate per config</h2>
<div class="pair"><figure id="chart-pass-rate">{{.Charts.pass}}</figure>
<div class="tbl"><table><thead><tr><th class="name">config</th><th>strict</th><th>CI</th><th>scored</th><th>CI</th><th>SE</th></tr></thead>
<tbody>{{range .S.Configs}}<tr><td class="name" title="{{.Config}}">{{.Config}}</td><td>{{pctp .PassAt1.Strict}}</td><td class="ci">{{pctp .PassAt1.CILow}} – {{pctp .PassAt1.CIHigh}}</td>
<td>{{pctp .PassAt1.Scored}}</td><td class="ci">{{pctp .PassAt1.ScoredCILow}} – {{pctp .PassAt1.ScoredCIHigh}}</td><td>{{pctp .PassAt1.SE}}</td></tr>{{end}}</tbody></table></div></div>

<h2 id="heatmap">Tasks × configs</h2>
<p class="note">Each cell is passes / scored trials, hardest tasks first; "!" marks a cell with an errored trial. Click a cell for its trial directories.</p>
<div class="pair"><figure id="chart-heatmap">{{.Charts.heat}}</figure>
<div class="tbl"><table><thead><tr><th class="name">task</th>{{range .Configs}}<th title="{{.}}">{{.}}</th>{{end}}</tr></thead>
<tbody>{{range $t := .Tasks}}<tr><td class="name" title="{{$t.Task}}">{{$t.Task}}</td>{{range $.Configs}}{{if has $t .}}{{with cell $t .}}<td>{{.Passes}}/{{.Trials}}{{if .Errors}} <span class="err">!{{.Errors}}</span>{{end}}</td>{{end}}{{else}}<td>–</td>{{end}}{{end}}</tr>{{end}}</tbody></table></div></div>

<h2 id="latency">Latency</h2>
<p class="note">Trial duration (setup, run and grade): box from the first to the third quartile, a bar at the median, whiskers to the fastest and slowest trial, every trial a dot.</p>
<div class="pair"><figure id="chart-latency">{{.Charts.latency}}</figure>
<div class="tbl"><table><thead><tr><th class="name">config</th><th>n</th><th>p50 s</th><th>p90 s</th><th>p99 s</th></tr></thead>
<tbody>{{range .S.Configs}}<tr><td class="name" title="{{.Config}}">{{.Config}}</td>{{with .DurationS}}<td>{{.N}}</td><td>{{num .P50}}</td><td>{{num .P90}}</td><td>{{num .P99}}</td>{{else}}<td>0</td><td>–</td><td>–</td><td>–</td>{{end}}</tr>{{end}}</tbody></table></div></div>

<h2 id="cost">Cost and pass rate</h2>
<p class="note">Strict pass@1 against {{.CostLabel}}; the line joins the configs no other config beats on both.</p>
<div class="pair"><figure id="chart-cost">{{.Charts.cost}}</figure>
<div class="tbl"><table><thead><tr><th class="name">config</th><th>total</th><th>per trial</th><th>per pass</th><th>sources</th><th>tokens in</th><th>cached</th><th>out</th></tr></thead>
<tbody>{{range .S.Configs}}<tr><td class="name" title="{{.Config}}">{{.Config}}</td><td>{{usd .CostUSD.Total}}</td><td>{{usd .CostUSD.PerTrial}}</td><td>{{usd .CostUSD.PerPass}}</td>
<td class="ci">{{range $k, $v := .CostUSD.SourceCounts}}{{$k}}:{{$v}} {{end}}</td>
{{with .Tokens}}<td>{{num .Input}}</td><td>{{num .Cached}}</td><td>{{num .Output}}</td>{{else}}<td>–</td><td>–</td><td>–</td>{{end}}</tr>{{end}}</tbody></table></div></div>

<h2 id="outcomes">Outcomes</h2>
<div class="pair"><figure id="chart-outcomes">{{.Charts.outcomes}}</figure>
<div class="tbl"><table><thead><tr><th class="name">config</th><th>passed</th><th>failed</th><th>timed out</th><th>errors</th><th>cancelled</th><th>skipped</th><th>pending</th></tr></thead>
<tbody>{{range .S.Configs}}<tr><td class="name" title="{{.Config}}">{{.Config}}</td><td class="pass">{{.Passed}}</td><td class="fail">{{.Failed}}</td><td>{{.TimedOut}}</td>
<td>{{if .Errored}}<span class="err">{{.Errored}}</span> <span class="ci">{{range $k, $v := .Errors}}{{$k}}:{{$v}} {{end}}</span>{{else}}0{{end}}</td><td>{{.Cancelled}}</td><td>{{.Skipped}}</td><td>{{.Pending}}</td></tr>{{end}}</tbody></table></div></div>

<h2 id="pairs">Paired comparisons</h2>
<p class="note">On the tasks both configs scored: per task a − b of the scored pass fraction. CI: task bootstrap. p: exact two-sided ({{if .S.Baseline}}b is the baseline {{.S.Baseline}}; {{end}}McNemar with one trial per task, else the sign test), Holm-adjusted over all pairs.</p>
<div class="wide"><table class="sortable" id="pairs-table"><thead><tr><th class="name" data-sort>a</th><th class="name" data-sort>b</th><th data-sort>tasks</th><th data-sort>a better</th><th data-sort>b better</th><th data-sort>ties</th><th data-sort>mean a − b</th><th>CI</th><th data-sort>p</th><th data-sort>p (Holm)</th><th>test</th></tr></thead>
<tbody>{{range .S.Pairs}}<tr><td class="name">{{.A}}</td><td class="name">{{.B}}</td><td>{{.Tasks}}</td><td>{{.ABetter}}</td><td>{{.BBetter}}</td><td>{{.Ties}}</td>
<td data-v="{{.MeanDiff}}" class="{{if gt .MeanDiff 0.0}}pass{{else if lt .MeanDiff 0.0}}fail{{end}}">{{pct .MeanDiff}}</td><td class="ci">{{pct .CILow}} – {{pct .CIHigh}}</td><td>{{pv .PValue}}</td><td>{{pv .PHolm}}</td><td>{{.Test}}</td></tr>
{{else}}<tr><td class="name" colspan="11">no two configs scored a common task</td></tr>{{end}}</tbody></table></div>

<h2 id="tasks">Per task</h2>
<div class="wide"><table class="sortable" id="tasks-table"><thead><tr><th class="name" data-sort>task</th><th class="name" data-sort>config</th><th data-sort>passes</th><th data-sort>scored</th><th data-sort>errors</th><th data-sort>pending</th><th class="name">trials</th></tr></thead>
<tbody>{{range $t := .Tasks}}{{range $.Configs}}{{if has $t .}}{{$cfg := .}}{{with cell $t .}}<tr><td class="name" title="{{$t.Task}}">{{$t.Task}}</td><td class="name">{{$cfg}}</td><td>{{.Passes}}</td><td>{{.Trials}}</td><td>{{if .Errors}}<span class="err">{{.Errors}}</span>{{else}}0{{end}}</td><td>{{.Pending}}</td>
<td class="name">{{range index $.Trials $t.Task}}{{if eq .Config $cfg}}<a href="{{trial .}}" title="{{.TrialID}}: {{.Outcome}}{{with .Error}} ({{.Class}}: {{.Code}}){{end}}" class="{{if eq .Outcome "passed"}}pass{{else if eq .Outcome "failed"}}fail{{else}}err{{end}}">r{{printf "%02d" .Repeat}}</a> {{end}}{{end}}</td></tr>{{end}}{{end}}{{end}}{{end}}</tbody></table></div>
<script>{{.JS}}</script>
</body></html>
`
