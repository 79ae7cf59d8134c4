package clifront_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/fabric-runtime/fabric/internal/cli"
	"github.com/fabric-runtime/fabric/internal/clifront"
	"github.com/fabric-runtime/fabric/internal/clifront/gen"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
)

var update = flag.Bool("update", false, "rewrite tree_gen.go from internal/cli's command tree")

// tree_gen.go is what gen writes from the tree as it is now; -update
// rewrites it (go generate ./internal/clifront does).
func TestTreeIsCurrent(t *testing.T) {
	src, err := gen.Generate(cli.Tree())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(testproc.RepoRoot(), gen.File)
	if *update {
		if err := os.WriteFile(path, src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, src) {
		t.Fatalf("%s is not what internal/cli's command tree writes: run go generate ./internal/clifront", gen.File)
	}
}

// gen refuses a flag clifront would not rebuild the same, naming it.
func TestGenerateRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		add  func(*cobra.Command)
		want string
	}{
		{"pflag string array", func(c *cobra.Command) { c.Flags().StringArray("tag", nil, "u") }, "fabric x --tag: value stringArray (pflag.stringArrayValue) is no type clifront rebuilds"},
		{"int", func(c *cobra.Command) { c.Flags().Int("n", 0, "u") }, "fabric x --n: value int"},
		{"deprecated flag", func(c *cobra.Command) { c.Flags().String("old", "", "u"); _ = c.Flags().MarkDeprecated("old", "gone") }, "fabric x --old: deprecations are not rebuilt"},
		{"command alias of a suggestion", func(c *cobra.Command) { c.SuggestFor = []string{"y"} }, "fabric x sets SuggestFor"},
		{"completion function", func(c *cobra.Command) {
			c.ValidArgsFunction = func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
				return nil, 0
			}
		}, "fabric x sets ValidArgsFunction"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := &cobra.Command{Use: "fabric"}
			x := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return nil }}
			tc.add(x)
			root.AddCommand(x)
			_, err := gen.Generate(root)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Generate: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

type outcome struct {
	code     int
	out, err string
	// exec is the program and command line handed on (fabric only).
	exec []string
}

func runTree(args []string) outcome {
	var out, errb bytes.Buffer
	code := cli.Run(context.Background(), args, cli.Stdio{In: strings.NewReader(""), Out: &out, Err: &errb})
	return outcome{code: code, out: out.String(), err: errb.String()}
}

func runFront(args []string) outcome {
	var out, errb bytes.Buffer
	var handed []string
	code := clifront.Run(args, clifront.Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}, func(program string, a []string) error {
		handed = append([]string{program}, a...)
		return errExec
	})
	return outcome{code: code, out: out.String(), err: errb.String(), exec: handed}
}

var errExec = execError{}

type execError struct{}

func (execError) Error() string { return "exec refused by the test" }

// paths lists every command of the tree as its words after fabric.
func paths(t *testing.T) (all, runnable [][]string, cmds map[string]*cobra.Command) {
	t.Helper()
	cmds = map[string]*cobra.Command{}
	var walk func(c *cobra.Command, words []string)
	walk = func(c *cobra.Command, words []string) {
		all = append(all, words)
		cmds[strings.Join(words, " ")] = c
		if c.Runnable() {
			runnable = append(runnable, words)
		}
		for _, sub := range c.Commands() {
			walk(sub, append(slices.Clone(words), sub.Name()))
		}
	}
	walk(cli.Tree(), nil)
	if len(all) < 50 {
		t.Fatalf("the tree has %d commands", len(all))
	}
	return all, runnable, cmds
}

// fabric prints every help, completion and usage error it answers itself
// byte for byte as the tree does, with the same exit code, and hands
// nothing on; a command that parses no flags of its own (batch worker and
// cancel pass them to fabric-temporal) gets even --help handed on.
func TestAnswersAsTheTree(t *testing.T) {
	all, _, cmds := paths(t)
	var lines [][]string
	for _, words := range all {
		w := slices.Clip(words)
		c := cmds[strings.Join(words, " ")]
		lines = append(lines,
			append([]string{"help"}, w...),
			append([]string{"__complete"}, append(w, "")...),
			append([]string{"__complete"}, append(w, "--")...),
		)
		if !c.DisableFlagParsing {
			lines = append(lines, append(w, "--help"), append(w, "-h"), append(w, "--no-such-flag"))
		}
	}
	lines = append(lines, nil, []string{"nosuch"}, []string{"deploy", "nosuch"}, []string{"packages", "catalog", "nosuch"},
		[]string{"completion", "bash"}, []string{"completion", "zsh"}, []string{"completion", "fish"}, []string{"completion", "powershell"},
		[]string{"run", "--output"}, []string{"ru"}, []string{"help", "nosuch"}, []string{"--output", "text", "--help"},
		[]string{"run", "x.yaml", "--strict=maybe"}, []string{"batch", "run", "--progress-interval", "soon"})
	for _, args := range lines {
		want, got := runTree(args), runFront(args)
		if got.exec != nil {
			t.Errorf("fabric %q: handed on %q", args, got.exec)
			continue
		}
		if got.code != want.code || got.out != want.out || got.err != want.err {
			t.Errorf("fabric %q:\nfabric:    exit %d\nstdout %q\nstderr %q\nthe tree: exit %d\nstdout %q\nstderr %q", args, got.code, got.out, got.err, want.code, want.out, want.err)
		}
	}
}

// Every runnable command's command line goes to its program unchanged
// once its flags parse: usage errors in its arguments, required flags and
// flag groups included, which the tree checks in that order, with
// validators only the tree has (its program prints them); a failed exec is
// a usage error naming the command.
func TestHandsOnToTheProgram(t *testing.T) {
	_, runnable, cmds := paths(t)
	for _, words := range runnable {
		c := cmds[strings.Join(words, " ")]
		args := append(slices.Clip(words), "a", "--output", "text")
		if c.DisableFlagParsing {
			args = append(slices.Clip(words), "--help", "--anything", "goes")
		}
		want := clifront.CoreBinary
		if words[0] == "serve" {
			want = cli.ServeBinary
		}
		got := runFront(args)
		if !slices.Equal(got.exec, append([]string{want}, args...)) {
			t.Errorf("fabric %q: handed on %q, want %s with the same arguments", args, got.exec, want)
		}
		if got.code != cli.ExitUsage || got.err != "fabric: "+strings.Join(words, " ")+": exec refused by the test\n" || got.out != "" {
			t.Errorf("fabric %q: exit %d, stdout %q, stderr %q", args, got.code, got.out, got.err)
		}
	}
}
