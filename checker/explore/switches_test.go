package explore_test

import (
	"context"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"stampede/checker/check"
	"stampede/checker/explore"
	"stampede/checker/harness"
	"stampede/checker/point"
	"stampede/checker/shelves"
	"stampede/shop/catalog"
)

// cowShop is single-flight with a copy-on-write cache, its points written
// in by hand as the grader writes them into a student's copy. With gap,
// two fills copy the map and store it back with no lock among them, so
// one can lose the other's shelf: a bug between two adjacent statements.
type cowShop struct {
	db    *catalog.DB
	gap   bool
	mu    sync.Mutex // writers of the cache, and the lock table
	locks map[string]*sync.Mutex
	cache atomic.Pointer[map[string][]string]
}

func newCow(gap bool) shelves.New {
	return func(db *catalog.DB) shelves.Shop {
		s := &cowShop{db: db, gap: gap, locks: map[string]*sync.Mutex{}}
		s.cache.Store(&map[string][]string{})
		return s
	}
}

func (s *cowShop) Top(ctx context.Context, shelf string) ([]string, error) {
	point.Here()
	if books, ok := (*s.cache.Load())[shelf]; ok {
		return books, nil
	}
	point.Here()
	l := s.lock(shelf)
	point.Here()
	l.Lock()
	point.Here()
	defer l.Unlock()
	point.Here()
	if books, ok := (*s.cache.Load())[shelf]; ok {
		return books, nil
	}
	point.Here()
	books, err := s.db.Top(ctx, shelf)
	point.Here()
	if err != nil {
		return nil, err
	}
	point.Here()
	s.publish(shelf, books)
	point.Here()
	return books, nil
}

func (s *cowShop) lock(shelf string) *sync.Mutex {
	point.Here()
	s.mu.Lock()
	point.Here()
	defer s.mu.Unlock()
	point.Here()
	if s.locks[shelf] == nil {
		point.Here()
		s.locks[shelf] = new(sync.Mutex)
	}
	point.Here()
	return s.locks[shelf]
}

func (s *cowShop) publish(shelf string, books []string) {
	point.Here()
	if !s.gap {
		point.Here()
		s.mu.Lock()
		point.Here()
		defer s.mu.Unlock()
	}
	point.Here()
	next := maps.Clone(*s.cache.Load())
	point.Here()
	next[shelf] = books
	point.Here()
	s.cache.Store(&next)
}

func switches(newShop shelves.New) check.Verdict {
	h := harness.New(context.Background(), "stampede/checker/explore_test", harness.DefaultBound)
	return explore.Switches(h, newShop, explore.Case1)
}

func TestSwitchesOpenTheGapBetweenTwoStatementsEveryRun(t *testing.T) {
	if testing.Short() {
		t.Skip("plays every schedule of the fixed scenes")
	}
	for range 3 {
		v := switches(newCow(true))
		require.False(t, v.Pass, "a copy-on-write cache with no lock among writers: %s", v.Figure)
		require.Contains(t, v.Figure, "fixed scene 3 of 4", "two shelves filled at once is the scene that loses one")
		require.Contains(t, v.Message, "queried again")
		require.True(t, strings.Contains(v.Message, "--seed 10995116"), "the seed replays the schedule: %s", v.Message)
	}
	v := switches(newCow(false))
	require.True(t, v.Pass, "the same shop with its writers under a lock: %s", v.Message)
	require.Contains(t, v.Figure, "4 scenes under")
}
