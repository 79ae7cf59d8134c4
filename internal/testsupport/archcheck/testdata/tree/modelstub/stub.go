// Package modelstub is API code: API families are free, harness names are not.
package modelstub

var geminiURL, harness = "/v1beta", "codex"
