package check

import "testing"

func TestAScenesCheckRunsOnceForEveryThreeRuns(t *testing.T) {
	plain := Info{ID: "once"}
	explorer := Info{ID: "explore", Scenes: true}
	apart := Info{ID: "tokens", Apart: &Apart{What: "lock token"}}
	for _, c := range []struct{ repeat, plain, explorer int }{
		{0, 1, 1}, {1, 1, 1}, {2, 2, 1}, {3, 3, 1}, {4, 4, 2}, {6, 6, 2}, {10, 10, 4},
	} {
		if got := plain.RunsOf(c.repeat); got != c.plain {
			t.Errorf("a plain check at repeat %d runs %d times, want %d", c.repeat, got, c.plain)
		}
		if got := explorer.RunsOf(c.repeat); got != c.explorer {
			t.Errorf("an explorer at repeat %d runs %d times, want %d", c.repeat, got, c.explorer)
		}
		if got := apart.RunsOf(c.repeat); got != c.explorer {
			t.Errorf("an Apart check at repeat %d runs %d times, want %d", c.repeat, got, c.explorer)
		}
	}
}
