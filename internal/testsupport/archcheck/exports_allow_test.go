package archcheck

// exportAllow is, per package under adapters/, the exported identifiers
// (package-level constants, variables, types and functions of its non-test
// files) it may have: what a user composes (New, ID, descriptors,
// Settings with the types and constants its fields use, Packages) and the
// error codes (Code*) callers branch on. An identifier that is no longer
// exported is only logged, so that cutting an export never needs this
// table first.
var exportAllow = map[string][]string{
	"claude": {
		"CodeAPIKeyMissing", "CodeBinaryNotFound", "CodeBudgetExceeded", "CodeClaudeError", "CodeExecutionError",
		"CodeExited", "CodeIO", "CodeInitializeFailed", "CodeInvalidConfig", "CodeInvalidSettings", "CodeMaxTurns",
		"CodeModelAuth", "CodeModelError", "CodeModelRateLimited", "CodeStartFailed", "CodeStructuredOutput",
		"Descriptor", "ID", "New", "Packages", "Settings",
		"PermissionAcceptEdits", "PermissionAuto", "PermissionBypass", "PermissionDefault", "PermissionDontAsk", "PermissionPlan",
		"SourceLocal", "SourceProject", "SourceUser",
	},
	"pi": {
		"CodeBinaryNotFound", "CodeExited", "CodeIO", "CodeInvalidConfig", "CodeInvalidSettings", "CodeModelError",
		"CodePromptRejected", "CodeStartFailed",
		"Descriptor", "ID", "New", "Packages", "Settings",
	},
	"codex": {
		"CodeAPIKeyMissing", "CodeBinaryNotFound", "CodeContextExceeded", "CodeExited", "CodeInvalidConfig",
		"CodeInvalidSettings", "CodeInvalidWorkspace", "CodeModelAuth", "CodeModelError", "CodeModelRateLimited",
		"CodeProtocol", "CodeStartFailed", "CodeTurnFailed", "CodeTurnStillRunning",
		"Descriptor", "ID", "New", "Packages", "Settings",
		"ApprovalAutoReview", "ApprovalDenyAll", "SandboxDangerFullAccess", "SandboxReadOnly", "SandboxWorkspaceWrite",
	},

	"acp": {
		"CodeAPIKeyMissing", "CodeBinaryNotFound", "CodeExited", "CodeInvalidConfig", "CodeInvalidSettings",
		"CodeMaxTokens", "CodeMaxTurns", "CodeRefusal", "CodeStartFailed", "CodeTurnFailed", "Descriptors", "ID",
		"KindEnv", "KindFile", "KindString", "KindURL", "Named", "New", "Packages", "PolicyAllow", "PolicyAsk",
		"PolicyDeny", "Profile", "ProfileClaude", "ProfileCodexACP", "ProfileDroid", "ProfileGemini", "ProfileKilo",
		"ProfileOpenClaw", "ProfileQwen", "SettingSpec", "Settings",
	},
	"bundled": {
		"Adapters", "Descriptor", "Descriptors", "EnvAdapter", "Lookup", "Packages", "Serve", "ServeHost", "Set",
	},
	"nodelib": {
		"DeepAgentsDescriptor", "DeepAgentsID", "Descriptor", "Descriptors", "Packages", "StrandsDescriptor", "StrandsID",
	},
	"openclaw": {
		"BrowserPort", "CodeAPIKeyMissing", "CodeBinaryNotFound", "CodeGatewayExited", "CodeHTTPError",
		"CodeInvalidConfig", "CodeInvalidSettings", "CodeInvalidWorkspace", "CodeModelError", "CodeNodeUnsupported",
		"CodePortUnavailable", "CodeRateLimited", "CodeStartFailed", "CodeStartTimeout", "CodeTurnFailed", "Dashboard",
		"DefaultAgentID", "DefaultEnd", "DefaultStart", "Descriptor", "Footprint", "ID", "New", "Packages", "PortRange",
		"Settings",
	},
	"opencode": {
		"CodeAPIKeyMissing", "CodeBinaryNotFound", "CodeInvalidConfig", "CodeInvalidSettings", "CodeInvalidWorkspace",
		"CodeModelError", "CodeServerExited", "CodeStartFailed", "CodeStartTimeout", "CodeTurnFailed", "DefaultAgent",
		"DefaultRequestTimeout", "Descriptor", "ID", "New", "Packages", "Settings", "Terminal", "Web",
	},
	"scripted": {
		"CodeInvalidSettings", "CodeInvokeFailure", "CodeMaxSteps", "CodeModelAuth", "CodeModelBadRequest",
		"CodeModelContextExceeded", "CodeModelNotFound", "CodeModelOverloaded", "CodeModelProtocol",
		"CodeModelQuotaExhausted", "CodeModelRateLimited", "CodeModelServerError", "CodeModelUnreachable",
		"CodeServiceReference", "CodeServiceUnauthorized", "CodeServiceUnavailable", "CodeStartFailure", "Descriptor",
		"DescriptorV1", "ID", "IDv1", "ModeCrashMidInvoke", "ModeExitOnStart", "ModeHang", "ModeInvokeFailure",
		"ModeMalformedOutput", "ModeModel", "ModeOK", "ModeSlowStream", "ModeStartFailure", "New", "Packages", "Settings",
		"Usage",
	},
}
