package cli

import (
	"fmt"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// No flag of the fabric command tree is pflag's StringArray or
// StringSlice: their values allocate a 4 KB csv.Writer when registered,
// in every process (cliflag.Strings says more).
func TestNoCSVFlags(t *testing.T) {
	a := &app{}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		check := func(f *pflag.Flag) {
			switch fmt.Sprintf("%T", f.Value) {
			case "*pflag.stringArrayValue":
				t.Errorf("%s --%s: pflag's StringArrayVar; use cliflag.Strings", c.CommandPath(), f.Name)
			case "*pflag.stringSliceValue":
				t.Errorf("%s --%s: pflag's StringSliceVar; use cliflag.List", c.CommandPath(), f.Name)
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
