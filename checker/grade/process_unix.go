//go:build unix

package grade

import (
	"os"
	"os/exec"
	"syscall"
)

// setGroup starts cmd in a process group of its own.
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills the process group that p leads: the child and whatever
// it started.
func killGroup(p *os.Process) error {
	if p == nil {
		return nil
	}
	return syscall.Kill(-p.Pid, syscall.SIGKILL)
}

// dumpStacks asks a Go child to print every goroutine's stack and exit.
func dumpStacks(p *os.Process) { _ = p.Signal(syscall.SIGQUIT) }

// interrupt asks a process to stop and clean up after itself.
func interrupt(p *os.Process) error { return p.Signal(os.Interrupt) }

// tryLock takes f's exclusive lock if no other process holds it.
func tryLock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == syscall.EWOULDBLOCK {
		return false, nil
	}
	return err == nil, err
}
