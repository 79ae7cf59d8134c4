// Package decodefuzz holds the fuzz target of batchreport.DecodeTrial, the
// reader of trial.json files. It is a package of its own so that the
// fuzzing binary links batchreport and nothing else: Go's fuzzer snapshots
// every coverage counter of the binary after each input, and batchreport's
// own tests link chromedp (whose cdproto is huge) and the JSON Schema
// validator, which made a fuzz run 100 times slower.
//
// It has no code of its own and must never grow any.
package decodefuzz
