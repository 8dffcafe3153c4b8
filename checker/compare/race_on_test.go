//go:build race

package compare

// raceOn is set when the tests run with the race detector, which makes a
// full-scale row ten times slower: the tests then play a tenth of it.
const raceOn = true
