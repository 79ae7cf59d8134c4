// Package client names an API family outside API code: it counts.
package client

const family = "openai"
