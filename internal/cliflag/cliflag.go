package cliflag

import (
	"encoding/csv"
	"strings"

	"github.com/spf13/pflag"
)

// Strings registers a repeatable string flag (--name a --name b, each
// value taken whole, commas included), as pflag's StringArrayVar does and
// printed the same in help. pflag's own renders the flag's empty default
// through a csv.Writer with a 4 KB buffer when the flag is registered;
// the fabric command tree has 22 such flags, which is 88 KB of fresh heap
// (and its page faults) in every process, help included (bench/cli).
func Strings(fs *pflag.FlagSet, p *[]string, name, usage string) {
	fs.Var((*stringArray)(p), name, usage)
}

// List registers a flag whose values are comma-separated lists
// (--only a,b --only c, CSV quoting allowed), as pflag's StringSliceVar
// does and printed the same in help, without its 4 KB at registration
// (Strings).
func List(fs *pflag.FlagSet, p *[]string, name, usage string) {
	fs.Var((*stringList)(p), name, usage)
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

// stringList is a pflag.Value that appends the comma-separated values it
// is set to.
type stringList []string

func (s *stringList) Set(v string) error {
	if v == "" {
		return nil
	}
	values, err := csv.NewReader(strings.NewReader(v)).Read()
	if err != nil {
		return err
	}
	*s = append(*s, values...)
	return nil
}

// Type names the value in help as pflag's StringSliceVar does.
func (s *stringList) Type() string { return "stringSlice" }

// String is the flag's value for help's default: nothing while it is
// empty, as for pflag's own.
func (s *stringList) String() string { return (*stringArray)(s).String() }

// GetSlice makes completion offer the flag again (cobra.SliceValue).
func (s *stringList) GetSlice() []string { return *s }
