package cli

import (
	"fmt"
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

// No flag of the fabric command tree is pflag's StringArray or
// StringSlice: their values allocate a 4 KB csv.Writer when registered,
// in every process (stringsVar says more). conformance --only, a
// comma-separated list, is the one StringSlice left.
func TestNoCSVFlags(t *testing.T) {
	a := &app{}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		check := func(f *pflag.Flag) {
			switch fmt.Sprintf("%T", f.Value) {
			case "*pflag.stringArrayValue":
				t.Errorf("%s --%s: pflag's StringArrayVar; use stringsVar", c.CommandPath(), f.Name)
			case "*pflag.stringSliceValue":
				if c.CommandPath() != "fabric conformance" || f.Name != "only" {
					t.Errorf("%s --%s: pflag's StringSliceVar allocates 4 KB when registered", c.CommandPath(), f.Name)
				}
			}
		}
		c.LocalFlags().VisitAll(check)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	root := a.rootCommand()
	a.populateAll()
	walk(root)
}
