//go:build !unix

package grade

import (
	"errors"
	"os"
	"os/exec"
)

// setGroup does nothing here: the child is killed on its own.
func setGroup(cmd *exec.Cmd) {}

// killGroup kills the child.
func killGroup(p *os.Process) error {
	if p == nil {
		return nil
	}
	return p.Kill()
}

// dumpStacks cannot ask for stacks here; the child is killed instead.
func dumpStacks(p *os.Process) { _ = p.Kill() }

// interrupt stops the process.
func interrupt(p *os.Process) error { return p.Kill() }

// tryLock cannot lock here: builds go to a folder of their own (slot.go).
func tryLock(f *os.File) (bool, error) { return false, errors.ErrUnsupported }
