package cli

import "github.com/spf13/cobra"

// group makes cmd, a command that only groups subcommands (packages,
// deploy, model, batch), a stand-in until a command line goes through
// it: populate adds its subcommands and flags then (app.populate). Most
// of the command tree is in these groups, and building it cost every
// process, help included, about 90 KB of fresh heap and 600 allocations
// (bench/cli). Until populated, the stand-in has a Run that never runs,
// so that its parent's help lists it as it lists the populated group.
func (a *app) group(cmd *cobra.Command, populate func(*cobra.Command)) *cobra.Command {
	cmd.Run = func(*cobra.Command, []string) {}
	if a.groups == nil {
		a.groups = map[*cobra.Command]func(*cobra.Command){}
	}
	a.groups[cmd] = populate
	return cmd
}

// populate builds the groups the command line args goes through, as cobra
// resolves it; every group when it resolves to no command, which is the
// case for cobra's own help, completion and __complete commands (they are
// added when the tree executes) and for a usage error.
func (a *app) populate(root *cobra.Command, args []string) {
	for len(a.groups) > 0 {
		cmd, _, err := root.Find(args)
		if err != nil {
			a.populateAll()
			return
		}
		grown := false
		for c := cmd; c != nil; c = c.Parent() {
			if populate, ok := a.groups[c]; ok {
				a.build(c, populate)
				grown = true
			}
		}
		if !grown {
			return
		}
	}
}

// populateAll builds every group.
func (a *app) populateAll() {
	for c, populate := range a.groups {
		a.build(c, populate)
	}
}

func (a *app) build(c *cobra.Command, populate func(*cobra.Command)) {
	delete(a.groups, c)
	c.Run = nil
	populate(c)
}
