package conformance

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Verdict is the outcome of one item.
type Verdict string

// Verdicts.
const (
	Pass Verdict = "pass"
	Fail Verdict = "fail"
	Skip Verdict = "skip" // the item does not apply or its prerequisites are missing
)

// Item is the verdict on one item of the matrix.
type Item struct {
	ID      string  `json:"id"`
	Name    string  `json:"name"`
	Verdict Verdict `json:"verdict"`
	Detail  string  `json:"detail,omitempty"`
	// Claim is what the executor said of the item's postcondition and
	// Observation what the suite saw itself (items with an observable
	// postcondition; see Observable). They are separate on purpose: an
	// item passes only if its observation agrees.
	Claim       *Claim        `json:"claim,omitempty"`
	Observation *Observation  `json:"observation,omitempty"`
	Elapsed     time.Duration `json:"-"`
}

// MarshalJSON writes Elapsed as elapsed_ms.
func (it Item) MarshalJSON() ([]byte, error) {
	type plain Item
	return json.Marshal(struct {
		plain
		ElapsedMS float64 `json:"elapsed_ms"`
	}{plain(it), float64(it.Elapsed.Microseconds()) / 1000})
}

// nameWidth aligns the details of text lines.
const nameWidth = 22

// String is the item's text line: "PASS  1 discovery  detail".
func (it Item) String() string {
	label := it.ID + " " + it.Name
	return strings.TrimRight(fmt.Sprintf("%-4s  %-*s %s", strings.ToUpper(string(it.Verdict)), nameWidth, label, it.Detail), " ")
}

// Report is the result of one run of the suite.
type Report struct {
	Adapter string `json:"adapter"`
	// ModelEndpoint is the modelstub the suite served for the run (a
	// profile with modelstub).
	ModelEndpoint *ModelEndpoint `json:"model_endpoint,omitempty"`
	Items         []Item         `json:"items"`
	Passed        bool           `json:"passed"` // no item failed
	Elapsed       time.Duration  `json:"-"`
}

// MarshalJSON writes Elapsed as elapsed_ms and adds the verdict counts.
func (r Report) MarshalJSON() ([]byte, error) {
	type plain Report
	items := r.Items
	if items == nil {
		items = []Item{}
	}
	r.Items = items
	return json.Marshal(struct {
		plain
		Counts    map[Verdict]int `json:"counts"`
		ElapsedMS float64         `json:"elapsed_ms"`
	}{plain(r), r.Counts(), float64(r.Elapsed.Microseconds()) / 1000})
}

// ModelEndpoint is the scripted model endpoint of a run: its script's
// path and sha256, and what it saw.
type ModelEndpoint struct {
	Script string `json:"script"`
	SHA256 string `json:"sha256"`
	// Requests is how many requests the endpoint saw during the run.
	Requests int `json:"requests"`
}

// Counts returns how many items got each verdict.
func (r Report) Counts() map[Verdict]int {
	c := map[Verdict]int{Pass: 0, Fail: 0, Skip: 0}
	for _, it := range r.Items {
		c[it.Verdict]++
	}
	return c
}

// Item returns the item with the given id.
func (r Report) Item(id string) (Item, bool) {
	for _, it := range r.Items {
		if it.ID == id {
			return it, true
		}
	}
	return Item{}, false
}

// Unexpected lists what a test of an adapter should report as errors:
// every failed item, every skipped item whose name is not in mayskip (the
// items its profile documents as not provokable), and a report that did
// not pass.
func (r Report) Unexpected(mayskip ...string) []string {
	var out []string
	for _, it := range r.Items {
		switch {
		case it.Verdict == Fail:
			out = append(out, fmt.Sprintf("item %s %s failed: %s", it.ID, it.Name, it.Detail))
		case it.Verdict == Skip && !slices.Contains(mayskip, it.Name):
			out = append(out, fmt.Sprintf("item %s %s skipped: %s", it.ID, it.Name, it.Detail))
		}
	}
	if !r.Passed {
		out = append(out, "the report did not pass")
	}
	return out
}

// Summary is the report's last text line.
func (r Report) Summary() string {
	c := r.Counts()
	verdict := "PASSED"
	if !r.Passed {
		verdict = "FAILED"
	}
	return fmt.Sprintf("%s %s: %d passed, %d failed, %d skipped in %s", r.Adapter, verdict, c[Pass], c[Fail], c[Skip], r.Elapsed.Round(time.Millisecond))
}

// WriteText writes one line per item and the summary.
func (r Report) WriteText(w io.Writer) error {
	for _, it := range r.Items {
		if _, err := fmt.Fprintln(w, it.String()); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w, r.Summary())
	return err
}
