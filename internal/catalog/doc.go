// Package catalog discovers adapter descriptors, validates them and compiles
// their embedded JSON Schemas once.
//
// Discovery follows upstream NeMo Fabric's order: bundled descriptors, then
// installed data directories (share/nemo-fabric/adapters/<name>/ under each
// prefix, and node_modules package roots), then <base_dir>/adapters, then
// discovery.local_paths. A later source wins, and every replaced duplicate is
// reported as a diagnostic naming both paths.
//
// The catalog never imports or runs adapter code, never loads a remote or
// file $ref from a descriptor schema, and never names an adapter.
package catalog
