package main

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of the start times in /proc: USER_HZ, 100 on every
// architecture Linux runs Go on.
const userHZ = 100

// goRunStart returns when the `go run` that started this command began,
// when it did: go run compiles the command before it can run it, and that
// time is part of what `setup` took.
func goRunStart() (time.Time, bool) {
	self, ok := procStat("self")
	if !ok || len(self.fields) < 2 {
		return time.Time{}, false
	}
	parent, ok := procStat(self.fields[1])
	if !ok || parent.comm != "go" || len(parent.fields) < 20 {
		return time.Time{}, false
	}
	ticks, err := strconv.ParseInt(parent.fields[19], 10, 64)
	boot, ok := bootTime()
	if err != nil || !ok {
		return time.Time{}, false
	}
	return boot.Add(time.Duration(ticks) * time.Second / userHZ), true
}

// stat is a process's /proc/PID/stat: its command's name, and the fields
// after it (state, ppid, ..., the start time at index 19).
type stat struct {
	comm   string
	fields []string
}

func procStat(pid string) (stat, bool) {
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return stat{}, false
	}
	s := string(data)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return stat{}, false
	}
	return stat{comm: s[open+1 : end], fields: strings.Fields(s[end+1:])}, true
}

// bootTime is when the machine started, from /proc/stat.
func bootTime() (time.Time, bool) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			sec, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return time.Unix(sec, 0), err == nil
		}
	}
	return time.Time{}, false
}
