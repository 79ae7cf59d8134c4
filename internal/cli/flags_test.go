package cli

import (
	"slices"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// stringsVar parses and prints as pflag's StringArrayVar: each value whole
// (commas included), in order; help shows the type and no default.
func TestStringsVar(t *testing.T) {
	var ours, theirs []string
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	stringsVar(fs, &ours, "ours", "u")
	fs.StringArrayVar(&theirs, "theirs", nil, "u")
	args := []string{"--ours", "a,b", "--theirs", "a,b", "--ours=c", "--theirs=c"}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ours, theirs) || !slices.Equal(ours, []string{"a,b", "c"}) {
		t.Errorf("parsed %q, pflag's %q", ours, theirs)
	}
	fresh := pflag.NewFlagSet("t", pflag.ContinueOnError)
	var a, b []string
	stringsVar(fresh, &a, "x", "usage")
	want := fresh.FlagUsages()
	other := pflag.NewFlagSet("t", pflag.ContinueOnError)
	other.StringArrayVar(&b, "x", nil, "usage")
	if got := other.FlagUsages(); got != want {
		t.Errorf("help %q, pflag's %q", want, got)
	}
	if _, ok := fresh.Lookup("x").Value.(cobra.SliceValue); !ok {
		t.Error("not a cobra.SliceValue: completion would not offer the flag again")
	}
}
