package decodefuzz

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/batchreport"
)

// Seeds are small on purpose: the fuzzer minimises every new interesting
// input, and the time that takes grows with the input's length.
var seeds = []string{
	`{"schema_version":"fabric.batch.trial/v1alpha1","trial_id":"t__c__r01","task":"t","config":"c","repeat":1,"outcome":"passed","attempts":1,"timings":{"started_ms":1000,"ended_ms":4000,"duration_s":3},"paths":{"dir":"trials/t/c/r01"}}`,
	`{"schema_version":"fabric.batch.trial/v1alpha1","trial_id":"a","task":"t","config":"c","outcome":"error","error":{"class":"model","code":"rate_limited","message":"429","retryable":true,"retry_after_seconds":2.5},"attempts":2,"history":[{"attempt":1,"outcome":"error","error":{"class":"model","code":"rate_limited","message":"429"}}],"timings":{"queued_ms":1,"started_ms":9,"ended_ms":12,"duration_s":0.003,"setup_s":0.001,"run_s":0.001,"grade_s":0}}`,
	`{"schema_version":"fabric.batch.trial/v1alpha1","trial_id":"b","task":"t","config":"c","outcome":"failed","timed_out":true,"reward":0.25,"rewards":{"tests":0.25},"usage":{"input_tokens":10,"cached_input_tokens":2,"output_tokens":3},"cost_usd":0.01,"cost_source":"reported","runtime_ids":["rt-1"]}`,
	`{"schema_version":"fabric.batch.trial/v1alpha1","trial_id":"s","task":"t","config":"c","outcome":"skipped","reason":"budget"}`,
	`{"schema_version":"fabric.batch.trial/v1alpha1","trial_id":"x","surprise":1}`,
	`{"schema_version":"fabric.batch.trial/v1alpha1"} {}`,
	`{}`,
}

// TestSeedsDecodeAsExpected keeps the seeds honest: the first four are
// valid records, the last three are not.
func TestSeedsDecodeAsExpected(t *testing.T) {
	for i, s := range seeds {
		_, err := batchreport.DecodeTrial([]byte(s))
		if (err == nil) != (i < 4) {
			t.Errorf("seed %d: err = %v", i, err)
		}
	}
}

func FuzzDecodeTrial(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := batchreport.DecodeTrial(data)
		if err != nil {
			return
		}
		// A record that decodes survives its own re-encoding unchanged,
		// builds a summary and writes a trials.csv row.
		b, err := json.Marshal(tr)
		if err != nil {
			t.Fatal(err)
		}
		again, err := batchreport.DecodeTrial(b)
		if err != nil {
			t.Fatalf("re-encoded record does not decode: %v\n%s", err, b)
		}
		if b2, _ := json.Marshal(again); !bytes.Equal(b, b2) {
			t.Fatalf("round trip changed the record:\n%s\n%s", b, b2)
		}
		s, err := batchreport.Build(batchreport.Input{Trials: []contract.BatchTrial{tr}})
		if err != nil {
			t.Fatalf("Build of one decoded record: %v", err)
		}
		if s.Totals.Planned != 1 || len(s.Configs) != 1 {
			t.Fatalf("one record gave totals %+v, %d configs", s.Totals, len(s.Configs))
		}
		var buf bytes.Buffer
		if err := batchreport.WriteTrialsCSV(&buf, []*contract.BatchTrial{&tr}); err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(buf.Bytes(), []byte("\n")); n < 2 {
			t.Fatalf("trials.csv of one record has %d lines", n)
		}
	})
}
