package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// Exit codes: 1 for input that cannot be converted, 2 for a command line
// that cannot be understood (the convention of flag and most Unix tools).
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

const usageText = `sentryprof converts Sentry profiles to OpenTelemetry profiles and pprof, and
OpenTelemetry profiles back to Sentry profile chunks.

Usage:
  sentryprof convert [-in FILE|-] [-out FILE|-] [-format otlp-proto|otlp-json|pprof]
                     [-project ID] [-service NAME] [-split]
  sentryprof export  [-in FILE|-] [-out FILE|-] [-platform PLATFORM]

convert reads a Sentry envelope (as an SDK sends it) or a bare V1 "profile" /
V2 "profile_chunk" JSON document, plain or gzip'd, and writes OTLP profiles or
pprof. export reads OTLP profiles (protobuf, or JSON with one request per line
as the file exporter writes them) and writes Sentry V2 chunk JSON, one chunk
per line.

Run 'sentryprof <command> -h' for the flags of a command.

Examples:
  sentryprof convert -in chunk.envelope -out chunk.pb.gz
  go tool pprof -top chunk.pb.gz
  sentryprof convert -in request.gz -out profiles.json -service checkout
  sentryprof convert < chunk.envelope | sentryprof export -platform python
`

// env is the process environment a command runs in; tests substitute it.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// usageError is a command line that cannot be understood: exit code 2.
// reported is set when the flag package has already printed the problem and
// the usage.
type usageError struct {
	msg      string
	reported bool
}

func (e *usageError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// run executes the command line args (without the program name) and returns
// the process exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText)
		return exitUsage
	}
	cmd, code, ok := command(args[0], e)
	if !ok {
		return code
	}
	return exitCode(args[0], cmd(args[1:], e), stderr)
}

// command is the subcommand name runs; false, with the exit code, when the
// name asks for help or names none.
func command(name string, e *env) (func([]string, *env) error, int, bool) {
	switch name {
	case "convert":
		return runConvert, exitOK, true
	case "export":
		return runExport, exitOK, true
	case "-h", "-help", "--help", "help":
		fmt.Fprint(e.stdout, usageText)
		return nil, exitOK, false
	}
	fmt.Fprintf(e.stderr, "sentryprof: unknown command %q\n\n%s", name, usageText)
	return nil, exitUsage, false
}

// exitCode reports a subcommand's error and maps it to the exit code.
func exitCode(name string, err error, stderr io.Writer) int {
	var ue *usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &ue) && ue.reported:
		return exitUsage
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "sentryprof %s: %v\nRun 'sentryprof %s -h' for usage.\n", name, err, name)
		return exitUsage
	}
	fmt.Fprintf(stderr, "sentryprof %s: %v\n", name, err)
	return exitError
}

// parseFlags parses a subcommand's flags. Errors the flag package reports
// itself (an unknown flag, a bad value) become usage errors; positional
// arguments are refused so that a forgotten -in is not silently ignored.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &usageError{msg: err.Error(), reported: true}
	}
	if fs.NArg() > 0 {
		return usageErrorf("unexpected argument %q (use -in to name the input)", fs.Arg(0))
	}
	return nil
}

// newFlagSet returns a flag set whose -h output is the command's synopsis,
// description and examples followed by its flags.
func newFlagSet(name, help string, e *env) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), help)
		fmt.Fprintln(fs.Output(), "\nFlags:")
		fs.PrintDefaults()
	}
	return fs
}
