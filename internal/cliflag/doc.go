// Package cliflag holds the flag value types of Fabric's command lines
// that pflag's own would make cost every process (a repeatable string
// flag, a comma-separated list). The fabric command tree registers them
// (internal/cli) and so does fabric's command line (internal/clifront),
// which must parse and print every flag exactly as the tree does.
package cliflag
