package contract

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Normalised model error codes: what a failed run's model error means,
// whatever the adapter called it. An adapter's descriptor maps its own error
// codes and messages to these (AdapterDescriptor.ModelErrors); the core
// never guesses them from an adapter id.
const (
	ModelRateLimited     = "model_rate_limited"     // 429: too many requests for now; retry after a while
	ModelQuotaExhausted  = "model_quota_exhausted"  // the account's quota or credit is spent; retrying does not help
	ModelOverloaded      = "model_overloaded"       // 529/503: the provider is overloaded; retry later
	ModelAuth            = "model_auth"             // 401/403: the key is missing, invalid or not allowed
	ModelNotFound        = "model_not_found"        // 404: no such model (or endpoint)
	ModelContextExceeded = "model_context_exceeded" // the request is longer than the model's context window
	ModelServerError     = "model_server_error"     // another 5xx
	ModelUnreachable     = "model_unreachable"      // no HTTP answer: connection refused, DNS, TLS, reset
)

// ModelErrorCodes returns the normalised model error codes, in the order
// above, in a new slice the caller may change.
func ModelErrorCodes() []string {
	return []string{
		ModelRateLimited, ModelQuotaExhausted, ModelOverloaded, ModelAuth,
		ModelNotFound, ModelContextExceeded, ModelServerError, ModelUnreachable,
	}
}

// ModelErrorRule is one entry of a descriptor's model_errors: an error
// whose code equals Code (when set) and whose message matches Message (when
// set; a Go regular expression, case-insensitive, unanchored) is the model
// error Normalized. At least one of Code and Message is set. Retryable,
// when set, overrides the error's own retryable flag.
type ModelErrorRule struct {
	Code       string `json:"code,omitempty"`
	Message    string `json:"message,omitempty"`
	Normalized string `json:"normalized" jsonschema:"enum=model_rate_limited,enum=model_quota_exhausted,enum=model_overloaded,enum=model_auth,enum=model_not_found,enum=model_context_exceeded,enum=model_server_error,enum=model_unreachable"`
	Retryable  *bool  `json:"retryable,omitempty"`
}

// ValidateModelErrors checks the descriptor's model_errors (see
// ModelErrorRule.Validate); the error names the rule by its index.
func (d *AdapterDescriptor) ValidateModelErrors() error {
	for i := range d.ModelErrors {
		if field, err := d.ModelErrors[i].Validate(); err != nil {
			return fmt.Errorf("model_errors[%d]%s: %w", i, field, err)
		}
	}
	return nil
}

// Validate checks one rule: it has a code or a message, a known normalised
// code and a message that compiles. field is the rule's offending key
// (".normalized", ".message"), "" for the rule as a whole.
func (r *ModelErrorRule) Validate() (field string, err error) {
	if r.Code == "" && r.Message == "" {
		return "", errors.New("needs a code or a message to match")
	}
	if codes := ModelErrorCodes(); !slices.Contains(codes, r.Normalized) {
		return ".normalized", fmt.Errorf("%q is not a model error code (want one of %s)", r.Normalized, strings.Join(codes, ", "))
	}
	if r.Message != "" {
		if _, err := modelErrorPattern(r.Message); err != nil {
			return ".message", fmt.Errorf("invalid regular expression: %w", err)
		}
	}
	return "", nil
}

// ClassifyModelError maps a failed run's error to a normalised model error
// code with the descriptor's model_errors: the first rule whose code and
// message match wins. retryable is the rule's, else the error's own. ok is
// false when info is nil or no rule matches (the error is not a model error
// as far as the adapter knows). A rule with an invalid message never
// matches (validation rejects it).
func (d *AdapterDescriptor) ClassifyModelError(info *ErrorInfo) (normalized string, retryable bool, ok bool) {
	if d == nil || info == nil {
		return "", false, false
	}
	for _, r := range d.ModelErrors {
		if r.Code == "" && r.Message == "" {
			continue
		}
		if r.Code != "" && r.Code != info.Code {
			continue
		}
		if r.Message != "" {
			re, err := modelErrorPattern(r.Message)
			if err != nil || !re.MatchString(info.Message) {
				continue
			}
		}
		retryable = info.Retryable
		if r.Retryable != nil {
			retryable = *r.Retryable
		}
		return r.Normalized, retryable, true
	}
	return "", false, false
}

// modelErrorPatterns caches compiled rule messages: descriptors are values
// copied freely, so the cache lives beside them, keyed by the pattern.
var modelErrorPatterns sync.Map // string -> *regexp.Regexp

func modelErrorPattern(p string) (*regexp.Regexp, error) {
	if re, ok := modelErrorPatterns.Load(p); ok {
		return re.(*regexp.Regexp), nil
	}
	re, err := regexp.Compile("(?i)" + p) // case-insensitive
	if err != nil {
		return nil, err
	}
	modelErrorPatterns.Store(p, re)
	return re, nil
}
