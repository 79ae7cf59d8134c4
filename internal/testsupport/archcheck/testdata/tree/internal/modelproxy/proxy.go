// Package modelproxy is API code: the API families are free here.
package modelproxy

const families = "openai, anthropic, gemini"
