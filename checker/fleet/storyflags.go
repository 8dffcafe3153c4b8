package fleet

import (
	"context"
	"flag"
	"io"
	"os"

	"stampede/checker/harness"
)

// StoryFlags are the flags every Redis case's story takes (`shop run N`):
// --redis, the server to play on, and --seed and --timeline, which play
// the explorer's scene of a seed instead of the story.
type StoryFlags struct {
	URL      string
	Seed     uint64
	Timeline bool
}

// Parse adds the flags to fs, beside the story's own, parses args with
// them (harness.ParseFlags, which writes the help to w), and checks them
// (Check).
func (f *StoryFlags) Parse(ctx context.Context, fs *flag.FlagSet, args []string, w io.Writer) error {
	f.add(fs)
	if err := harness.ParseFlags(fs, args, w); err != nil {
		return err
	}
	return f.Check(ctx)
}

func (f *StoryFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&f.URL, "redis", ServerURL(), "a real Redis or Valkey server, such as redis://localhost:6379/0 (default: $"+URLVar+", or an embedded miniredis)")
	fs.Uint64Var(&f.Seed, "seed", 0, "play the explorer's scene of this seed (from a failed explore check) instead of the story")
	fs.BoolVar(&f.Timeline, "timeline", false, "with --seed: print every event of the scene")
}

// Check, once the flags are parsed, returns a *harness.FlagError when
// --redis names a server that is not there: a mistake in the flags, not
// in the code under test. With --seed it points the explorer's worlds,
// which open on the server the environment names (ServerURL), at the one
// --redis named.
func (f *StoryFlags) Check(ctx context.Context) error {
	if f.URL != "" {
		w, err := Open(ctx, f.URL)
		if err != nil {
			return &harness.FlagError{Err: err}
		}
		w.Close()
	}
	if f.Seed != 0 && f.URL != ServerURL() {
		return os.Setenv(URLVar, f.URL)
	}
	return nil
}
