// Package camel has identifiers split on camelCase: codexHome and piHost
// count, apiKey and pipeline do not.
package camel

var codexHome, apiKey, pipeline = "a", "b", "c"

func piHost() string { return apiKey + pipeline }
