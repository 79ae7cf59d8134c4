// Package document reads a deployment document (fabric.deployment/v1alpha1)
// from YAML or JSON into a contract.Deployment, strictly: unknown fields,
// duplicate keys, null, YAML anchors, aliases, merge keys, tags and several
// documents are errors, every error is reported at its file, line and path,
// and integration references are resolved by scope.
//
// It answers what an accepted document attaches (Bindings, Attachments,
// Credentials, Agents) and writes documents back (MarshalYAML, Init).
//
// It must never read a credential's value (an env variable or a file it
// names), never put a value that could be a secret in an error, never load
// the FabricConfig files agents name (internal/config does that later),
// never touch the network, and never require that a path exists.
package document
