package cliflag

import (
	"slices"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Strings and List parse and print as pflag's StringArrayVar and
// StringSliceVar: each value whole (commas included) or split as CSV, in
// order; help shows the type and no default.
func TestStringsVar(t *testing.T) {
	for _, tc := range []struct {
		name string
		ours func(*pflag.FlagSet, *[]string, string, string)
		want []string
	}{
		{"Strings", Strings, []string{"a,b", "c", `"d,e",f`}},
		{"List", List, []string{"a", "b", "c", "d,e", "f"}},
	} {
		var ours, theirs []string
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		tc.ours(fs, &ours, "ours", "u")
		if tc.name == "Strings" {
			fs.StringArrayVar(&theirs, "theirs", nil, "u")
		} else {
			fs.StringSliceVar(&theirs, "theirs", nil, "u")
		}
		args := []string{"--ours", "a,b", "--theirs", "a,b", "--ours=c", "--theirs=c", "--ours", `"d,e",f`, "--theirs", `"d,e",f`}
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ours, theirs) || !slices.Equal(ours, tc.want) {
			t.Errorf("%s: parsed %q, pflag's %q, want %q", tc.name, ours, theirs, tc.want)
		}
		fresh := pflag.NewFlagSet("t", pflag.ContinueOnError)
		var a, b []string
		tc.ours(fresh, &a, "x", "usage")
		other := pflag.NewFlagSet("t", pflag.ContinueOnError)
		if tc.name == "Strings" {
			other.StringArrayVar(&b, "x", nil, "usage")
		} else {
			other.StringSliceVar(&b, "x", nil, "usage")
		}
		if got, want := fresh.FlagUsages(), other.FlagUsages(); got != want {
			t.Errorf("%s: help %q, pflag's %q", tc.name, got, want)
		}
		if _, ok := fresh.Lookup("x").Value.(cobra.SliceValue); !ok {
			t.Errorf("%s: not a cobra.SliceValue: completion would not offer the flag again", tc.name)
		}
	}
}
