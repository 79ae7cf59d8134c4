// Package scripted is the bundled deterministic adapter (id
// fabric.scripted): responses come from its settings, with modes for every
// failure the conformance suite needs (start failure, invoke failure,
// malformed output, hang, crash mid-invoke, slow stream of N events), and
// mode model (model.go), which asks the config's model over OpenAI Chat
// Completions with one shell tool run in the workspace, so that a scripted
// model endpoint (modelstub) drives the outcomes.
//
// Turns stream output_delta events (tool_call and tool_result in mode
// model, for the one tool, shell). The service it provides has type
// shared_state and connection keys url and token_env; bound runtime hosts
// get a prepared service's token in FABRIC_SCRIPTED_SERVICE_TOKEN unless
// settings.service_token_env names another variable.
//
// It is a test and benchmark instrument, never a stand-in for a harness.
package scripted
