package main

import "flag"

// commands are the command's verbs, for suggestions.
var commands = []string{"setup", "list", "run", "check", "watch", "hint", "diff", "compare", "reset", "grade", "help"}

// suggest returns the candidate closest to word, when one is close enough
// to be a typo of it (two edits at most, and fewer than half of word's
// letters), or "".
func suggest(word string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := editDistance(word, c); d < bestD && 2*d < max(len(word), len(c)) {
			best, bestD = c, d
		}
	}
	return best
}

// didYouMean is suggest's answer as the end of an error line.
func didYouMean(word string, candidates []string, prefix string) string {
	if s := suggest(word, candidates); s != "" {
		return " (did you mean " + prefix + s + "?)"
	}
	return ""
}

// flagNames lists the flags fs defines.
func flagNames(fs *flag.FlagSet) []string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return names
}

// editDistance is the number of letters to insert, delete, change or swap
// with their neighbour to turn a into b (optimal string alignment).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
