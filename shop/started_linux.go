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
	up, ok := uptime()
	if err != nil || !ok {
		return time.Time{}, false
	}
	// Both counted from boot, to the hundredth of a second: /proc/stat's
	// btime is in whole seconds, and made setup claim up to a second more
	// than it took.
	since := up - time.Duration(ticks)*time.Second/userHZ
	if since < 0 {
		return time.Time{}, false
	}
	return time.Now().Add(-since), true
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

// uptime is how long the machine has been up, from /proc/uptime.
func uptime() (time.Duration, bool) {
	data, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return 0, false
	}
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		return 0, false
	}
	sec, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return 0, false
	}
	return time.Duration(sec * float64(time.Second)), true
}
