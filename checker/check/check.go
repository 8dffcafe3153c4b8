// Package check holds the lab's vocabulary: a case, its checks, and what a
// check found. The worker that runs student code and the command that prints
// the report both speak it.
package check

import "fmt"

// Module is the lab's module path: file names in the worker's stacks start
// with it.
const Module = "stampede"

// Case describes one case of the lab. It holds no student code.
//
// The Case is the one place a case is described: its number, chapter,
// points, whether it plays on Redis and its checks. Everything else that
// lists the cases (the scores, what a case may import, the help, the list
// of Redis cases CI grades on a real server) is derived from it, and a
// test holds the texts that name the cases (the chapters' table, the
// Classroom workflow) to it.
type Case struct {
	Number  int
	Title   string // "The bestseller stampede"
	Chapter string // "docs/01-bestseller-stampede.md"
	Summary string // one sentence for `shop list`
	// Breaks says what goes wrong in the story, for README.md's table of
	// the cases, and Lesson what the case teaches, for docs/README.md's
	// table of chapters (both tables are written from the registry).
	Breaks, Lesson string
	// Timeline says what `shop run N --timeline` draws.
	Timeline Timeline
	// Points is what the case is worth out of 100, by difficulty; the
	// lab's cases sum to 100. A case earns them only when every check
	// passes with the race detector on.
	Points int
	// Redis is set for a case whose shops talk to Redis: it may import
	// go-redis (and crypto and encoding, for tokens and values), `--redis
	// URL` points it at a real server, and CI grades it on one.
	Redis  bool
	Checks []Info
	// Hints are given one at a time by `shop hint`, from a nudge to the
	// decisive line of reasoning. The last names the reference solution.
	Hints []string
}

// Timeline is what a case's story draws with --timeline.
type Timeline int

const (
	// NoTimeline: the story takes no --timeline (case 7 draws its chart
	// of recomputes every time).
	NoTimeline Timeline = iota
	// VisitorLanes: the story draws each visitor's wait, and with --seed
	// each visitor of the explorer's scene.
	VisitorLanes
	// SceneEvents: the story draws nothing of its own; with --seed it
	// prints every event of the explorer's scene.
	SceneEvents
)

// Dir returns the case's package directory below cases/ or solutions/.
func (c Case) Dir() string { return fmt.Sprintf("case%02d", c.Number) }

// Check returns the check with the given id.
func (c Case) Check(id string) (Info, bool) {
	for _, in := range c.Checks {
		if in.ID == id {
			return in, true
		}
	}
	return Info{}, false
}

// Info describes one check.
type Info struct {
	ID      string // stable, for JSON reports and the known-wrong library
	Name    string // what is checked, as the PASS/FAIL line says it
	Catches string // the wrong answer this check exists to catch
	// Race marks the check whose verdict is the race detector's: it fails
	// when any of the case's runs reported a data race.
	Race bool
	// Apart, when set, makes each run of the check two processes started
	// alike, as two servers of a fleet are: both run the check at once,
	// and the values each reports in its verdict's Drawn must differ from
	// the other's. One process cannot show it: a generator with a fixed
	// seed, or a counter, shared by the instances of one process hands
	// each a different value, and repeats in every process of a fleet.
	Apart *Apart `json:",omitempty"`
	// Scenes marks a check that plays many random scenes in each run (an
	// explorer): one run already repeats its scene hundreds of times.
	Scenes bool `json:",omitempty"`
	// Varies marks a check whose verdict on a wrong answer may change from
	// run to run: its scene leaves an order to the machine (visitors on
	// processors side by side), or the library holds an answer whose
	// verdict there is the scheduler's (a maybe in the answer's row). The
	// grader runs such a check as many times as it is asked to, so that a
	// lucky run cannot pass a wrong answer; see RunsOf for the others.
	Varies bool `json:",omitempty"`
	// Parts, when above 1, splits each run of a Scenes check into Parts
	// processes side by side, each playing its share of the check's fixed
	// scenes (harness.H.Part): a check whose scenes take one process
	// seconds on a machine with a processor to spare. The run passes when
	// every part does; a part that fails fails it.
	Parts int `json:",omitempty"`
}

// OnceEvery is how many runs of a check that varies one run of any other
// check stands for: at `check`'s default of three runs, every check that
// does not vary runs once.
const OnceEvery = 3

// RunsOf returns how many times a grade asked for repeat runs runs the
// check: repeat for a check that Varies, and otherwise one run for every
// OnceEvery, at least one.
//
// A check that does not vary plays one schedule in every run (gates, a
// virtual clock, goroutines let go one at a time, one statement each in
// lockstep), so it gives an answer one verdict in every run: the library
// holds that for each of its answers, run after run, and a further run
// would spend the student's time to say it again. An explorer's one run
// plays hundreds of scenes, whether its verdict varies or not. An Apart
// check's wrong answers (a fixed value, one drawn once and shared, a
// generator seeded alike) fail it in every run, each run is two
// processes, and a right answer's false verdict is a chance per run: more
// runs only add to it.
func (in Info) RunsOf(repeat int) int {
	repeat = max(repeat, 1)
	if in.Varies && !in.Scenes && in.Apart == nil {
		return repeat
	}
	return (repeat + OnceEvery - 1) / OnceEvery
}

// PartsOf returns how many processes one run of the check takes: Parts,
// at least one.
func (in Info) PartsOf() int { return max(in.Parts, 1) }

// Apart says what two processes must not both draw, and what to do about it.
type Apart struct {
	What string // "lock token"
	Fix  string // "draw tokens from crypto/rand, or from a generator seeded from it"
	// Harm says what the same draws cost a fleet; "" for a token's ("one
	// holder cannot be told from another").
	Harm string `json:",omitempty"`
	// Share, when above 0, is the share of one process's values the
	// other may draw too before the check fails: for values honest draws
	// repeat by chance (delays to the millisecond), where a generator
	// seeded alike repeats nearly all of them. At 0 not one may be shared.
	Share float64 `json:",omitempty"`
}

// Status is a check's verdict.
type Status string

// The verdicts.
const (
	Pass  Status = "pass"
	Fail  Status = "fail"
	Skip  Status = "skip"  // could not be run here (the race detector without cgo), or its scene could not be staged
	Flaky Status = "flaky" // passed in some repetitions and failed in others
)

// Result is what one check found.
type Result struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Status  Status `json:"status"`
	Figure  string `json:"figure,omitempty"`  // the number behind the verdict: "ran 50"
	Message string `json:"message,omitempty"` // what went wrong, in plain words
	Detail  string `json:"detail,omitempty"`  // compiler lines, full race reports
	Runs    int    `json:"runs,omitempty"`    // how many times it ran
	Passed  int    `json:"passed,omitempty"`  // how many of those passed
	// NotRun is set when some of the check's runs were never started,
	// because another check had found code that never stops: the FAIL is
	// the grader's, not a verdict on the code.
	NotRun bool `json:"not_run,omitempty"`
}

// Verdict is what a check function returns: pass or fail, with the figure
// behind it and, on a failure, what went wrong; or skipped, with why.
type Verdict struct {
	Pass    bool
	Figure  string
	Message string
	// Skipped is set when the check's scene did not happen, for a reason
	// that is no mistake of the code's (a correct answer the checker
	// cannot stage that scene for): the check tested nothing, and says so
	// in Message rather than pass. When the code's own mistake kept the
	// scene from happening, the check fails instead, and says which.
	Skipped bool `json:",omitempty"`
	// Hung is set when the code never stopped running: every other check
	// would meet the same loop, so the grader need not run them.
	Hung bool `json:",omitempty"`
	// Drawn holds, for a check marked Apart, the values the process drew
	// that another process must not draw too.
	Drawn []string `json:",omitempty"`
}

// Passed returns a passing verdict with its figure.
func Passed(figure string) Verdict { return Verdict{Pass: true, Figure: figure} }

// Failed returns a failing verdict with its figure and a plain explanation.
func Failed(figure, message string) Verdict {
	return Verdict{Figure: figure, Message: message}
}

// Skipped returns the verdict of a check whose scene did not happen, with
// why. It neither passes nor fails.
func Skipped(why string) Verdict { return Verdict{Skipped: true, Message: why} }

// What the worker writes at the start of a line of its standard error when
// a story is stuck, and when the story's flags are wrong; the grader turns
// these lines into plain errors.
const (
	StoryStuck = "stuck: "
	StoryUsage = "usage: "
)
