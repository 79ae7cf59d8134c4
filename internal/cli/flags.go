package cli

import (
	"strings"

	"github.com/spf13/pflag"
)

// stringsVar registers a repeatable string flag (--name a --name b, each
// value taken whole, commas included), as pflag's StringArrayVar does and
// printed the same in help. pflag's own renders the flag's empty default
// through a csv.Writer with a 4 KB buffer when the flag is registered;
// the fabric command tree has 22 such flags, which is 88 KB of fresh heap
// (and its page faults) in every process, help included (bench/cli).
func stringsVar(fs *pflag.FlagSet, p *[]string, name, usage string) {
	fs.Var((*stringArray)(p), name, usage)
}

// stringArray is a pflag.Value that appends each value it is set to.
type stringArray []string

func (s *stringArray) Set(v string) error {
	*s = append(*s, v)
	return nil
}

// Type names the value in help as pflag's StringArrayVar does.
func (s *stringArray) Type() string { return "stringArray" }

// String is the flag's value for help's default: nothing while it is
// empty, so help prints no default, as for pflag's own.
func (s *stringArray) String() string {
	if len(*s) == 0 {
		return ""
	}
	return "[" + strings.Join(*s, ",") + "]"
}

// GetSlice makes completion offer the flag again after it was given, as
// for pflag's own (cobra.SliceValue).
func (s *stringArray) GetSlice() []string { return *s }
