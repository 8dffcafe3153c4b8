package check

import "testing"

func TestOnlyACheckThatVariesRunsEveryTime(t *testing.T) {
	varies := Info{ID: "hung-query", Varies: true}
	others := map[string]Info{
		"a check that does not vary": {ID: "once"},
		"an explorer":                {ID: "explore", Scenes: true},
		"an explorer that varies":    {ID: "explore", Scenes: true, Varies: true},
		"an Apart check":             {ID: "tokens", Apart: &Apart{What: "lock token"}, Varies: true},
	}
	for _, c := range []struct{ repeat, varies, others int }{
		{0, 1, 1}, {1, 1, 1}, {2, 2, 1}, {3, 3, 1}, {4, 4, 2}, {6, 6, 2}, {10, 10, 4},
	} {
		if got := varies.RunsOf(c.repeat); got != c.varies {
			t.Errorf("a check that varies, at repeat %d, runs %d times, want %d", c.repeat, got, c.varies)
		}
		for what, in := range others {
			if got := in.RunsOf(c.repeat); got != c.others {
				t.Errorf("%s, at repeat %d, runs %d times, want %d", what, c.repeat, got, c.others)
			}
		}
	}
}
