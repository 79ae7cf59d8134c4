package cli

import (
	"bytes"
	"slices"
	"testing"
)

// A group is built only when the command line goes through it, or when
// the line resolves to no command (cobra's help and completion commands,
// a usage error), which builds them all.
func TestGroupsBuiltOnThePath(t *testing.T) {
	all := []string{"batch", "deploy", "model", "packages"}
	for _, tc := range []struct {
		args    []string
		unbuilt []string
	}{
		{[]string{"--help"}, all},
		{nil, all},
		{[]string{"run", "--help"}, all},
		{[]string{"-o", "text", "run", "agent.yaml"}, all},
		{[]string{"packages", "list"}, []string{"batch", "deploy", "model"}},
		{[]string{"packages", "catalog", "init", "--root", "k"}, []string{"batch", "deploy", "model"}},
		{[]string{"deploy", "--state-dir", "s", "plan", "d.yaml"}, []string{"batch", "model", "packages"}},
		{[]string{"model"}, []string{"batch", "deploy", "packages"}},
		{[]string{"help", "packages", "list"}, nil},
		{[]string{"__complete", "packages", ""}, nil},
		{[]string{"completion", "bash"}, nil},
		{[]string{"nosuch"}, nil},
	} {
		a := &app{}
		a.populate(a.rootCommand(), tc.args)
		var unbuilt []string
		for c := range a.groups {
			unbuilt = append(unbuilt, c.Name())
		}
		slices.Sort(unbuilt)
		if !slices.Equal(unbuilt, tc.unbuilt) {
			t.Errorf("%q: unbuilt groups %q, want %q", tc.args, unbuilt, tc.unbuilt)
		}
	}
}

// The root's help lists a group that is not built yet as it lists the
// built one.
func TestUnbuiltGroupsInHelp(t *testing.T) {
	help := func(build bool) string {
		a := &app{}
		root := a.rootCommand()
		if build {
			a.populateAll()
		}
		if len(a.groups) > 0 == build {
			t.Fatalf("build %v: %d groups unbuilt", build, len(a.groups))
		}
		var out bytes.Buffer
		root.SetOut(&out)
		root.InitDefaultHelpCmd()
		root.InitDefaultCompletionCmd()
		if err := root.Help(); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	lazy, built := help(false), help(true)
	if lazy != built {
		t.Errorf("root help with groups unbuilt:\n%s\nbuilt:\n%s", lazy, built)
	}
	if !bytes.Contains([]byte(lazy), []byte("\n  packages ")) {
		t.Errorf("root help lists no packages:\n%s", lazy)
	}
}
