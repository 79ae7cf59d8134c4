package config

// Error and warning codes returned by this package. Every error is a
// *contract.ConfigError with Stage "config"; every warning is a
// contract.Diagnostic with Severity "warning".
//
//	| Code                       | Kind    | Meaning                                                                    |
//	|----------------------------|---------|----------------------------------------------------------------------------|
//	| config_unreadable          | error   | the config file cannot be opened or read (wraps the OS error)              |
//	| config_too_large           | error   | over 1 MiB, nested deeper than 1000 levels, or YAML aliases expand too far |
//	| config_syntax              | error   | not well-formed YAML or JSON                                               |
//	| multiple_documents         | error   | a YAML stream holds more than one document                                 |
//	| duplicate_key              | error   | a key appears twice in one mapping (YAML or JSON)                          |
//	| unsupported_yaml           | error   | valid YAML with no JSON meaning: merge keys (<<), non-scalar keys, alias cycles |
//	| invalid_type               | error   | wrong type at a path (string where an object is expected, ...), top level not a mapping, empty config |
//	| missing_field              | error   | a required field is absent or null                                         |
//	| invalid_value              | error   | right type, wrong value: blank, not in the enum, out of range, not finite  |
//	| unsupported_schema_version | error   | schema_version is not contract.ConfigSchemaVersion                         |
//	| invalid_env_name           | error   | an *_env field is not an environment-variable name                         |
//	| invalid_interpolation      | error   | malformed ${...} in a field that is interpolated                           |
//	| undefined_variable         | error   | ${VAR} names a variable that is not set (metadata "variable" = its name)   |
//	| unknown_key                | warning | key Fabric does not know (error for top-level keys with Options.Strict)    |
//	| interpolation_not_allowed  | warning | ${VAR} in a field that is not interpolated; the text is kept as written    |
//
// Errors and warnings carry Metadata "file" (when the source has a name) and
// "line" (when known); their messages then start with "file:line: ".
const (
	CodeUnreadable               = "config_unreadable"
	CodeTooLarge                 = "config_too_large"
	CodeSyntax                   = "config_syntax"
	CodeMultipleDocuments        = "multiple_documents"
	CodeDuplicateKey             = "duplicate_key"
	CodeUnsupportedYAML          = "unsupported_yaml"
	CodeInvalidType              = "invalid_type"
	CodeMissingField             = "missing_field"
	CodeInvalidValue             = "invalid_value"
	CodeUnsupportedSchemaVersion = "unsupported_schema_version"
	CodeInvalidEnvName           = "invalid_env_name"
	CodeInvalidInterpolation     = "invalid_interpolation"
	CodeUndefinedVariable        = "undefined_variable"
	CodeUnknownKey               = "unknown_key"
	CodeInterpolationNotAllowed  = "interpolation_not_allowed"
)

// stage is the Failure.Stage of every error this package returns.
const stage = "config"
