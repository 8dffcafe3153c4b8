package fleet

import (
	"fmt"
	"slices"
	"strings"
)

// Redis Cluster splits the keys into 16,384 hash slots and refuses, with
// CROSSSLOT, a command or a MULTI whose keys lie in more than one: a
// script's KEYS, a DEL of two keys, an MGET. Most managed Redis services
// run as a cluster, so code that works on one server breaks when it moves
// to one. A key's slot is CRC16 of the key, or of its hash tag: the text
// between its first "{" and the next "}", when that text is not empty. So
// "price:{book}" and "lease:{book}" share a slot, where "price:book" and
// "lease:price:book" do not.

// slots is how many hash slots a Redis Cluster has.
const slots = 16384

// Slot returns the hash slot Redis Cluster keeps key in.
func Slot(key string) int {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if n := strings.IndexByte(key[open+1:], '}'); n > 0 {
			key = key[open+1 : open+1+n]
		}
	}
	return int(crc16(key) % slots)
}

// crc16 is the CRC the cluster's slots use: CCITT, as XMODEM computes it
// (polynomial 0x1021, starting from 0, no reflection).
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// Crossing is a command, or a transaction's commands, that a Redis Cluster
// would refuse with CROSSSLOT.
type Crossing struct {
	Sent []Command // one command, or the commands between MULTI and EXEC
	Keys []string  // the keys they name, each once, in the order named
}

// Slots returns the slot of each of the crossing's keys, in order.
func (c Crossing) Slots() []int {
	out := make([]int, len(c.Keys))
	for i, k := range c.Keys {
		out[i] = Slot(k)
	}
	return out
}

// String says what was sent and where each key lies, for a diagnosis.
func (c Crossing) String() string {
	var keys []string
	for _, k := range c.Keys {
		keys = append(keys, fmt.Sprintf("%s (slot %d)", k, Slot(k)))
	}
	what := fmt.Sprintf("%q", brief(c.Sent[0]))
	if len(c.Sent) > 1 || c.Sent[0].Tx != 0 {
		var sent []string
		for _, s := range c.Sent {
			sent = append(sent, brief(s))
		}
		what = fmt.Sprintf("a MULTI of %q", strings.Join(sent, "; "))
	}
	return what + " names " + strings.Join(keys, " and ")
}

// CrossSlot returns the first command of the log, or the first
// transaction, whose keys lie in more than one hash slot. Commands of
// separate calls, and of a pipeline that is not a transaction, may name
// keys anywhere: a cluster client sends each to its own slot's node.
func CrossSlot(log []Command) (Crossing, bool) {
	txs := map[int]*Crossing{}
	var order []int
	for _, c := range log {
		if c.Tx == 0 {
			if x := (Crossing{Sent: []Command{c}, Keys: distinct(c.Keys)}); crosses(x.Keys) {
				return x, true
			}
			continue
		}
		x, ok := txs[c.Tx]
		if !ok {
			x = &Crossing{}
			txs[c.Tx] = x
			order = append(order, c.Tx)
		}
		x.Sent = append(x.Sent, c)
		for _, k := range c.Keys {
			if !slices.Contains(x.Keys, k) {
				x.Keys = append(x.Keys, k)
			}
		}
	}
	for _, tx := range order {
		if x := txs[tx]; crosses(x.Keys) {
			return *x, true
		}
	}
	return Crossing{}, false
}

// brief is a command as a diagnosis quotes it: a script's body left out.
func brief(c Command) string {
	if c.Scripted() && c.Name != "fcall" && c.Name != "fcall_ro" && len(c.Args) > 0 {
		c.Args = append([]string{"<script>"}, c.Args[1:]...)
	}
	s := c.String()
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

func distinct(keys []string) []string {
	var out []string
	for _, k := range keys {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

func crosses(keys []string) bool {
	for _, k := range keys[min(1, len(keys)):] {
		if Slot(k) != Slot(keys[0]) {
			return true
		}
	}
	return false
}
