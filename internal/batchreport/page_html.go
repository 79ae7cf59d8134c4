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
{{range .S.K}}<th data-sort>pass@{{.}} / pass^{{.}}</th>{{end}}
<th data-sort>tasks</th><th data-sort>scored / planned</th><th data-sort>errors</th><th data-sort>time&shy;outs</th><th data-sort>retries</th>
<th data-sort>p50 / p90 s</th><th data-sort>tokens in / out</th><th data-sort>cost / trial</th><th data-sort>cost / pass</th></tr></thead>
<tbody>{{range .S.Configs}}{{$c := .}}<tr>
<td class="name" title="{{.Config}}">{{.Config}}</td>
<td data-v="{{vpct .PassAt1.Strict}}"><b>{{pctp .PassAt1.Strict}}</b> <span class="ci">[{{pctp .PassAt1.CILow}}, {{pctp .PassAt1.CIHigh}}]</span></td>
<td data-v="{{vpct .PassAt1.Scored}}">{{pctp .PassAt1.Scored}} <span class="ci">[{{pctp .PassAt1.ScoredCILow}}, {{pctp .PassAt1.ScoredCIHigh}}]</span></td>
{{range $.S.K}}{{$k := printf "%d" .}}<td>{{with index $c.PassAtK $k}}{{pct .}}{{else}}–{{end}} / {{with index $c.PassHatK $k}}{{pct .}}{{else}}–{{end}}</td>{{end}}
<td>{{.Tasks}}</td><td data-v="{{.Scored}}">{{.Scored}} / {{.Planned}}</td>
<td data-v="{{.Errored}}">{{if .Errored}}<span class="err">{{.Errored}}</span><span class="sub">{{range $k, $v := .Errors}}{{$k}}:{{$v}} {{end}}</span>{{else}}0{{end}}</td>
<td>{{.TimedOut}}</td><td>{{.Retries}}</td>
<td data-v="{{with .DurationS}}{{.P50}}{{end}}">{{with .DurationS}}{{num .P50}} / {{num .P90}}{{else}}–{{end}}</td>
<td data-v="{{with .Tokens}}{{.Input}}{{end}}">{{with .Tokens}}{{tok .Input}} / {{tok .Output}}{{else}}–{{end}}</td>
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
<p class="note">Trial duration (setup, run and grade): box from the first to the third quartile, a bar at the median, whiskers to the fastest and slowest trial, every trial a dot. Below it the mean seconds of each phase; "other" is what the duration has beyond the three.</p>
<div class="pair"><div class="charts"><figure id="chart-latency">{{.Charts.latency}}</figure><figure id="chart-phases">{{.Charts.phases}}</figure></div>
<div class="tbl"><table><thead><tr><th class="name">config</th><th>n</th><th>p50 s</th><th>p90 s</th><th>p99 s</th><th>mean<br>setup</th><th>mean<br>run</th><th>mean<br>grade</th></tr></thead>
<tbody>{{range $i, $c := .S.Configs}}<tr><td class="name" title="{{.Config}}">{{.Config}}</td>{{with .DurationS}}<td>{{.N}}</td><td>{{num .P50}}</td><td>{{num .P90}}</td><td>{{num .P99}}</td>{{else}}<td>0</td><td>–</td><td>–</td><td>–</td>{{end}}
{{with index $.Phases $i}}{{if .N}}<td>{{secs .Setup}}</td><td>{{secs .Run}}</td><td>{{secs .Grade}}</td>{{else}}<td>–</td><td>–</td><td>–</td>{{end}}{{end}}</tr>{{end}}</tbody></table></div></div>

<h2 id="cost">Cost and pass rate</h2>
<p class="note">Strict pass@1 against {{.CostLabel}}; the line joins the configs no other config beats on both.</p>
<div class="pair"><figure id="chart-cost">{{.Charts.cost}}</figure>
<div class="tbl"><table><thead><tr><th class="name">config</th><th>cost total</th><th>per trial</th><th>per pass</th><th>sources</th><th>tokens in<br>/ trial</th><th>cached<br>in</th><th>out</th></tr></thead>
<tbody>{{range .S.Configs}}<tr><td class="name" title="{{.Config}}">{{.Config}}</td><td>{{usd .CostUSD.Total}}</td><td>{{usd .CostUSD.PerTrial}}</td><td>{{usd .CostUSD.PerPass}}</td>
<td class="ci wrap">{{range $k, $v := .CostUSD.SourceCounts}}{{$k}}:{{$v}} {{end}}</td>
{{with .Tokens}}<td>{{tok .Input}}</td><td>{{tok .Cached}}</td><td>{{tok .Output}}</td>{{else}}<td>–</td><td>–</td><td>–</td>{{end}}</tr>{{end}}</tbody></table></div></div>

<h2 id="outcomes">Outcomes</h2>
<div class="pair"><figure id="chart-outcomes">{{.Charts.outcomes}}</figure>
<div class="tbl"><table><thead><tr><th class="name">config</th><th>passed</th><th>failed</th><th>timed out</th><th>errors</th><th>can&shy;celled</th><th>skipped</th><th>pending</th></tr></thead>
<tbody>{{range .S.Configs}}<tr><td class="name" title="{{.Config}}">{{.Config}}</td><td class="pass">{{.Passed}}</td><td class="fail">{{.Failed}}</td><td>{{.TimedOut}}</td>
<td>{{if .Errored}}<span class="err">{{.Errored}}</span><span class="sub">{{range $k, $v := .Errors}}{{$k}}:{{$v}} {{end}}</span>{{else}}0{{end}}</td><td>{{.Cancelled}}</td><td>{{.Skipped}}</td><td>{{.Pending}}</td></tr>{{end}}</tbody></table></div></div>

<h2 id="timeline">Timeline</h2>
<p class="note">Over the batch's wall time: trials finished per config, trials in flight (admitted and not ended, so a trial waiting to retry still holds its slot), and one lane per slot with a bar per trial. A retried trial's earlier attempts and back-off are dashed, with a ring where its last attempt started; its tooltip lists the earlier attempts' errors and any retry-after a rate limit asked for. Wait is the time from admission to the last attempt's start.</p>
<div class="pair"><figure id="chart-timeline">{{.Charts.timeline}}</figure>
<div class="tbl"><table id="timeline-table"><thead><tr><th class="name">config</th><th>first<br>start</th><th>last<br>end</th><th>peak in<br>flight</th><th>wait<br>p50 / max</th><th>retried</th><th>rate-<br>limited</th></tr></thead>
<tbody>{{range .Timeline}}<tr{{if eq .Key ""}} class="total"{{end}}><td class="name" title="{{.Config}}">{{if .Key}}<span class="key {{.Key}}"></span>{{end}}{{.Config}}</td><td>{{.FirstStart}}</td><td>{{.LastEnd}}</td><td>{{.Peak}}</td><td>{{.MedianWait}} / {{.LongWait}}</td>
<td>{{if .Retried}}<span class="err">{{.Retried}}</span>{{else}}0{{end}}</td><td>{{if .RateLimited}}<span class="err">{{.RateLimited}}</span>{{else}}0{{end}}</td></tr>{{else}}<tr><td class="name" colspan="7">no trial has run yet</td></tr>{{end}}</tbody></table></div></div>

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
