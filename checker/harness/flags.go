package harness

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// FlagError is a story given flags it does not take, or values it cannot
// use. The worker prints it as one line, with no usage dump.
type FlagError struct{ Err error }

func (e *FlagError) Error() string { return e.Err.Error() }

// ErrHelpShown is returned by ParseFlags when the flags asked for help and
// it has been printed: the story should end without running.
var ErrHelpShown = errors.New("help shown")

// ParseFlags parses a story's flags. With -h or --help it writes the flags
// and their defaults to w and returns ErrHelpShown; any other mistake comes
// back as a *FlagError.
func ParseFlags(fs *flag.FlagSet, args []string, w io.Writer) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintf(w, "The story's flags (go run ./shop run N [flags]):\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
		return ErrHelpShown
	case err != nil:
		return &FlagError{err}
	case fs.NArg() > 0:
		return &FlagError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	return nil
}

// Positive checks that a flag's value is at least 1.
func Positive(name string, v int) error {
	if v < 1 {
		return &FlagError{fmt.Errorf("--%s must be at least 1, not %d", name, v)}
	}
	return nil
}
