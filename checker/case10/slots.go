package case10

import (
	"fmt"
	"slices"
	"strings"

	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/shop/catalog"
)

// oneSlotInfo is the check that the shop's commands would run on a Redis
// Cluster.
var oneSlotInfo = check.Info{
	ID:   "one-slot",
	Name: "every command, script and MULTI that names two keys names keys of one hash slot, and a script writes only keys it was given, so that Redis Cluster runs them",
	Catches: "a fill script, or a write's DEL, that names the price and its lease under keys with no shared hash tag " +
		"(price:<book> and lease:price:<book>): one Redis server runs it, and Redis Cluster, which most managed " +
		"Redis services are, refuses it with CROSSSLOT; a tag on one key only, or two tags; a WATCH and MULTI " +
		"across two slots; a script that writes a key whose name it built from ARGV, which a cluster routes " +
		"by KEYS alone; an outbox relay that deletes several books' keys in one DEL (wrong/relay-batch-del); and a " +
		"tag wrapped around a key rather than the book, which a name with braces splits (wrong/lease-tag-is-price-key)",
}

// OneSlot checks that every command the shop sends in a miss, a fill, a
// write, a fill the write refuses and the read again would be run by a
// Redis Cluster: a command, script or transaction that names several keys
// must name keys of one hash slot (fleet.Slot), and every key in Redis at
// the end must have been written by a command that named it among its keys
// (a script's KEYS).
// Two instances play it:
// shop-1's visitor misses and fills; shop-2 writes; shop-1's next visitor
// misses, and while its read of the row is held shop-2 writes again, so
// that its fill is refused and it reads again. Then two more books'
// writes are committed straight in the database, and the relays send
// their invalidations (relayTwoBooks). It catches a two-key script or DEL
// whose keys share no hash tag, a MULTI across slots, a script that
// writes a key it was not given, and a relay that names two books in one
// DEL. A shop that never names two keys at
// once, and passes every key in KEYS, passes.
func OneSlot(h *harness.H, newShop NewShop) check.Verdict {
	s, err := newScene(h, newShop, 2, fleet.HoldCalls(2), fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	first := s.Read(0)
	if err := s.Drive(first.Done, patience); err != nil {
		return waitVerdict(err, "shop-1's visitor, with Redis empty, was")
	}
	if v := gotOne(first, "shop-1's visitor", oldPrice); !v.Pass {
		return v
	}
	if v := s.WriteDone(1, newPrice); !v.Pass {
		return v
	}
	again := s.Read(0)
	if err := s.Drive(func() bool { return s.reads.Calls() >= 2 || again.Done() }, patience); err != nil {
		return waitVerdict(err, "shop-1's visitor after the write was")
	}
	refused := s.reads.Calls() >= 2
	if refused {
		// Held after its read of the row: a second write commits and
		// deletes, and its fill must be refused.
		if err := s.KeepAlive(); err != nil {
			return fleet.Unreachable(err)
		}
		w2 := s.Write(1, newer)
		if err := s.Drive(w2.Done, patience); err != nil {
			return waitVerdict(err, "shop-2's second write was")
		}
		s.reads.Gate(2).Open()
	}
	if err := s.Drive(again.Done, patience); err != nil {
		return waitVerdict(err, "shop-1's visitor after the write was")
	}
	// A key in Redis that no command wrote under its own name was written
	// by a script from a name it was not given in KEYS.
	held, err := s.World.Keys(h.Context())
	if err != nil {
		return fleet.Unreachable(err)
	}
	var undeclared []string
	for _, k := range held {
		declared := slices.ContainsFunc(s.taps, func(t *fleet.Tap) bool {
			return slices.ContainsFunc(t.Log(), func(c fleet.Command) bool { return c.Writes(k.Name) })
		})
		if !declared {
			undeclared = append(undeclared, k.Name)
		}
	}
	// On a real server such a key lies outside the scene's namespace,
	// under the very name the script was given in ARGV.
	strays, err := s.World.Strays(h.Context(), scriptArgs(s.taps))
	if err != nil {
		return fleet.Unreachable(err)
	}
	if k := append(undeclared, strays...); len(k) > 0 {
		return check.Failed("a key no command named", fmt.Sprintf("Redis holds %s, and no command the shop sent "+
			"that writes named it among its keys: a script wrote it from a name it built, or took from ARGV. One Redis server "+
			"runs that; Redis Cluster routes a script by its KEYS alone, so a key it was not given may belong to "+
			"another node, and the cluster refuses the script or never sees the key. Pass every key a script "+
			"touches in KEYS, with one hash tag: price:{%s} and lease:{%s}", k[0], book, book))
	}
	// The relays run last: their deletes would hide a key a script wrote.
	relayed, v := s.relayTwoBooks()
	if !v.Pass {
		return v
	}
	multi := 0
	for i, t := range s.taps {
		sent := t.Log()
		if x, crossed := fleet.CrossSlot(sent); crossed {
			return check.Failed(fmt.Sprintf("keys in %d slots", distinctInts(x.Slots())), fmt.Sprintf("shop-%d sent %s: "+
				"one Redis server runs it, but Redis Cluster (and so most managed Redis services) keeps keys in 16,384 "+
				"hash slots and refuses a command, a script or a MULTI whose keys are in more than one, with CROSSSLOT. "+
				"Give one book's keys one hash tag, the part in braces that alone decides the slot: price:{%s} and "+
				"lease:{%s}; and never name two books in one command (a relay that batches the outbox in one DEL): "+
				"their slots differ, whatever the tags", i+1, x, book, book))
		}
		txs := map[int]bool{}
		for _, c := range sent {
			switch {
			case c.Tx != 0:
				txs[c.Tx] = true
			case len(c.Keys) > 1:
				multi++
			}
		}
		multi += len(txs)
	}
	what := "a miss, a fill and a write"
	if refused {
		what = "a miss, a fill, a write and a fill the write refused"
	}
	if relayed {
		what += ", and the relays' deletes of two books"
	}
	figure := what + ": every command named at most one key"
	if multi > 0 {
		figure = fmt.Sprintf("%s: %s of two keys or more, each within one hash slot", what, fleet.Count(multi, "command"))
	}
	if v := oneSlotBraced(h, newShop); !v.Pass {
		return v
	}
	return check.Passed(figure + "; the same for a book with braces in its name")
}

// bracedBook is a book whose name holds braces, which decide a key's hash
// slot: a name is any string.
const bracedBook = "{Code} Craft: a }{ Tale"

// oneSlotBraced is OneSlot's second scene: a miss, a fill and a write of
// bracedBook, whose commands must name keys of one hash slot too. It
// catches a hash tag built around a key rather than the book, such as
// price:<book> and {price:<book>}:lease (c10-lease-tag-is-price-key): the
// braces in the name make the price key's tag the name's first part, and
// the two keys fall in two slots.
func oneSlotBraced(h *harness.H, newShop NewShop) check.Verdict {
	s, err := newSceneOf(h, fleet.ServerURL(), fleet.NewExactClock(), newShop, 2, fleet.HoldCalls(), fleet.HoldCalls(), bracedBook)
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	first := s.Read(0)
	if err := s.Drive(first.Done, patience); err != nil {
		return waitVerdict(err, "shop-1's visitor of "+bracedBook+", with Redis empty, was")
	}
	if v := gotOne(first, "shop-1's visitor of "+bracedBook, oldPrice); !v.Pass {
		return v
	}
	if v := s.WriteDone(1, newPrice); !v.Pass {
		return v
	}
	for i, t := range s.taps {
		if x, crossed := fleet.CrossSlot(t.Log()); crossed {
			return check.Failed(fmt.Sprintf("keys in %d slots", distinctInts(x.Slots())), fmt.Sprintf("for the book %q, "+
				"shop-%d sent %s: its keys fall in two hash slots, which Redis Cluster refuses with CROSSSLOT. A hash "+
				"tag is the part between the first { and the next } of a key's name, so a book's name with braces "+
				"in it changes the tag of a key that is not wrapped whole: wrap the book itself in the tag the same "+
				"way in every key (price:{<book>} and lease:{<book>}), so that its keys share the tag whatever the "+
				"name holds", bracedBook, i+1, x))
		}
	}
	return check.Passed("")
}

// scriptArgs lists the arguments the shops gave their scripts that name
// the scenes' book, the key names among them: a script's ARGV, past its
// KEYS.
func scriptArgs(taps []*fleet.Tap) []string {
	var names []string
	for _, t := range taps {
		for _, c := range t.Log() {
			if c.Name != "eval" && c.Name != "evalsha" && c.Name != "eval_ro" && c.Name != "evalsha_ro" {
				continue
			}
			for _, a := range c.Args {
				if strings.Contains(a, book) && !slices.Contains(c.Keys, a) {
					names = append(names, a)
				}
			}
		}
	}
	return names
}

// distinctInts counts the different values of xs.
func distinctInts(xs []int) int {
	seen := map[int]bool{}
	for _, x := range xs {
		seen[x] = true
	}
	return len(seen)
}

// relayTwoBooks has the scene's relays send the invalidations of two
// books' writes at once: both are committed straight in the database, as
// by two writers that died after their commits, before the relays start.
// A relay that batches the books' keys in one DEL names keys of two hash
// slots. It reports whether the relays ran; a shop with no Relay skips
// this part (the outbox check fails it).
func (s *scene) relayTwoBooks() (bool, check.Verdict) {
	for _, shop := range s.shops {
		if _, ok := shop.(Relayer); !ok {
			return false, check.Passed("")
		}
	}
	for i, b := range catalog.Priced()[:2] {
		if _, err := s.db.SetPrice(s.H.Context(), b, 1000+i); err != nil {
			return false, check.Failed("", "the checker's own write of "+b+" failed: "+err.Error())
		}
	}
	r, v := s.startRelays()
	if !v.Pass {
		return false, v
	}
	defer r.stop()
	// Sent or not, what the relays sent is judged below; the outbox check
	// judges whether they sent it.
	_ = s.Drive(func() bool { return len(s.db.Unsent()) == 0 || !r.early().Pass }, relayWithin)
	return true, check.Passed("")
}
