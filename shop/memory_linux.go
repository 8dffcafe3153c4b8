package main

import (
	"os"
	"strconv"
	"strings"
)

// availableMemory is how much memory the system can give new processes
// without swapping, from /proc/meminfo.
func availableMemory() (int64, bool) {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			f := strings.Fields(v)
			if len(f) == 0 {
				return 0, false
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}
