// Package config loads a FabricConfig from a YAML or JSON file.
//
// It rejects what a config must not contain (duplicate keys, several YAML
// documents, files over 1 MiB, values of the wrong type), reports every
// error it finds at its dotted path and line, applies upstream defaults,
// interpolates ${VAR} in the MCP server fields that allow it, and resolves
// relative paths against a base directory.
//
// It must never read the value of a variable named by an *_env field (those
// are secrets the harness reads later), never put a variable's value in an
// error or warning, never touch the network, and never require that a path
// exists.
package config
