package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// stateFile keeps what the lab remembers between commands: how many hints
// of each case have been shown. It lives in the lab's folder and git
// ignores it.
const stateFile = ".lab-state.json"

type state struct {
	Hints map[string]int `json:"hints"` // case number -> hint steps shown
}

func loadState(root string) (state, error) {
	st := state{Hints: map[string]int{}}
	data, err := os.ReadFile(filepath.Join(root, stateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return state{Hints: map[string]int{}}, nil // a damaged file starts afresh
	}
	if st.Hints == nil {
		st.Hints = map[string]int{}
	}
	return st, nil
}

func (st state) save(root string) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(root, stateFile), append(data, '\n'), 0o644)
}

func (st state) shown(n int) int       { return st.Hints[strconv.Itoa(n)] }
func (st state) setShown(n int, k int) { st.Hints[strconv.Itoa(n)] = k }
