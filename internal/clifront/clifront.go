package clifront

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabric-runtime/fabric/internal/cliflag"
	"github.com/fabric-runtime/fabric/internal/companion"
)

// CoreBinary is the program that runs fabric's commands: the command tree
// of internal/cli with everything its commands link.
const CoreBinary = "fabric-core"

// ProgramAnnotation names, on a command of the tree, the program that runs
// it when that is not CoreBinary (fabric serve runs in fabric-serve).
const ProgramAnnotation = "fabric/program"

// exitUsage is fabric's exit code for a usage error (cli.ExitUsage; a
// test holds them equal): a command line the tree refuses, or a program
// that is not installed.
const exitUsage = 2

// Stdio are the streams the command line uses.
type Stdio struct {
	In       io.Reader
	Out, Err io.Writer
}

// Exec replaces the process with program run with args (the command line
// as given to fabric); it returns only when it failed. companion.Exec is
// fabric's.
type Exec func(program string, args []string) error

// Main runs fabric's command line with the process's arguments and
// streams, replacing the process with the program of the command given.
func Main() int {
	return Run(os.Args[1:], Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, companion.Exec)
}

// Run answers help, completion and usage errors for args as the tree
// does, and hands every command line that names a runnable command to
// exec with args unchanged (its program parses them again). It returns the
// exit code.
func Run(args []string, stdio Stdio, exec Exec) int {
	root := build(commands(), func(cmd *cobra.Command, program string) error {
		err := exec(program, args)
		return fmt.Errorf("%s: %w", strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" "), err)
	})
	root.SetArgs(args)
	root.SetIn(stdio.In)
	root.SetOut(stdio.Out)
	root.SetErr(stdio.Err)
	if err := root.Execute(); err != nil {
		// As fabric-core prints a usage error.
		fmt.Fprintln(stdio.Err, "fabric:", err)
		return exitUsage
	}
	return 0
}

// command is one command of the tree, as internal/clifront/gen writes it
// from internal/cli's.
type command struct {
	// path is the command's words after fabric ("" for fabric itself).
	path                      string
	use, short, long, example string
	aliases                   []string
	hidden, runnable          bool
	disableFlagParsing        bool
	silenceUsage              bool
	silenceErrors             bool
	// annotations are key, value pairs.
	annotations []string
	flags       []flag
}

// flag is one flag a command defines.
type flag struct {
	name, shorthand string
	// typ is the pflag type name of its value (string, bool, duration,
	// float64; stringArray and stringSlice are cliflag's).
	typ string
	// def is its default as help prints it; noOptDef its value when given
	// without one, when not its type's own.
	def, noOptDef, usage string
	persistent, hidden   bool
	// annotations are cobra's (required and mutually exclusive flags).
	annotations map[string][]string
}

// build makes the cobra tree of cmds (parents before their children); a
// runnable command runs run with its program.
func build(cmds []command, run func(cmd *cobra.Command, program string) error) *cobra.Command {
	byPath := make(map[string]*cobra.Command, len(cmds))
	// runnable are the tree's runnable commands (not cobra's help and
	// completion commands, which fabric answers itself).
	runnable := map[*cobra.Command]bool{}
	var root *cobra.Command
	for i := range cmds {
		c := &cmds[i]
		cmd := &cobra.Command{
			Use:                c.use,
			Short:              c.short,
			Long:               c.long,
			Example:            c.example,
			Aliases:            c.aliases,
			Hidden:             c.hidden,
			DisableFlagParsing: c.disableFlagParsing,
			SilenceUsage:       c.silenceUsage,
			SilenceErrors:      c.silenceErrors,
		}
		if len(c.annotations) > 0 {
			cmd.Annotations = make(map[string]string, len(c.annotations)/2)
			for j := 0; j+1 < len(c.annotations); j += 2 {
				cmd.Annotations[c.annotations[j]] = c.annotations[j+1]
			}
		}
		if c.runnable {
			cmd.RunE = func(cmd *cobra.Command, _ []string) error { return handOn(cmd, run) }
			runnable[cmd] = true
		}
		for _, f := range c.flags {
			addFlag(cmd, f)
		}
		byPath[c.path] = cmd
		if c.path == "" {
			// Once flags parsed, a runnable command is handed on before
			// cobra checks its arguments, required flags and flag groups:
			// the tree checks its arguments first, with validators the
			// tree alone has (ExactArgs...), so its program says which.
			cmd.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
				if !runnable[cmd] {
					return nil
				}
				return handOn(cmd, run)
			}
			root = cmd
			continue
		}
		parent := ""
		if i := strings.LastIndexByte(c.path, ' '); i >= 0 {
			parent = c.path[:i]
		}
		byPath[parent].AddCommand(cmd)
	}
	return root
}

// handOn runs cmd with its program.
func handOn(cmd *cobra.Command, run func(cmd *cobra.Command, program string) error) error {
	if p := cmd.Annotations[ProgramAnnotation]; p != "" {
		return run(cmd, p)
	}
	return run(cmd, CoreBinary)
}

// addFlag defines f on cmd as internal/cli defines it, so that it parses
// and prints the same; its value is never read (the program parses the
// command line again).
func addFlag(cmd *cobra.Command, f flag) {
	fs := cmd.Flags()
	if f.persistent {
		fs = cmd.PersistentFlags()
	}
	switch f.typ {
	case "string":
		fs.StringP(f.name, f.shorthand, f.def, f.usage)
	case "bool":
		fs.BoolP(f.name, f.shorthand, f.def == "true", f.usage)
	case "duration":
		d, _ := time.ParseDuration(f.def)
		fs.DurationP(f.name, f.shorthand, d, f.usage)
	case "float64":
		v, _ := strconv.ParseFloat(f.def, 64)
		fs.Float64P(f.name, f.shorthand, v, f.usage)
	case "stringArray":
		cliflag.Strings(fs, new([]string), f.name, f.usage)
	case "stringSlice":
		cliflag.List(fs, new([]string), f.name, f.usage)
	default:
		// gen refuses any other type.
		panic(errors.New("clifront: flag --" + f.name + " has type " + f.typ))
	}
	pf := fs.Lookup(f.name)
	pf.Hidden = f.hidden
	pf.Annotations = f.annotations
	if f.noOptDef != "" {
		pf.NoOptDefVal = f.noOptDef
	}
}
