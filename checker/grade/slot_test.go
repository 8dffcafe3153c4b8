package grade

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"stampede/checker"
)

// slotsIn points the user's cache folder at a folder of the test's own and
// returns where the slots go. (The tests that call it cannot be parallel.)
func slotsIn(t *testing.T) string {
	t.Helper()
	// The go command's cache stays where it is: it would move with the
	// user's cache folder, and every build would start cold.
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	require.NoError(t, err)
	t.Setenv("GOCACHE", strings.TrimSpace(string(gocache)))
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("HOME", cache)
	dir := slotsDir()
	require.NotEmpty(t, dir)
	require.True(t, filepath.IsLocal(must(filepath.Rel(cache, dir))), "the slots are in the test's cache folder: %s", dir)
	return dir
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// slotNames returns the slots below dir.
func slotNames(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	for _, e := range must(os.ReadDir(dir)) {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}

// A second build of the same code is made in the same slot, from the same
// overlay, to the same program: all the go command needs to find the
// program up to date and link nothing (about 0.15 s where a link took
// 0.7). The program is copied out to the worker's own folder, where it
// runs.
func TestSecondBuildReusesItsSlot(t *testing.T) {
	dir := slotsIn(t)
	c, _ := checker.Find(1)
	ctx := context.Background()
	first, err := Build(ctx, root(t), Solution(c), false)
	require.NoError(t, err)
	defer first.Close()
	slots := slotNames(t, dir)
	require.Len(t, slots, 1)
	overlay := must(os.ReadFile(filepath.Join(dir, slots[0], "overlay.json")))

	second, err := Build(ctx, root(t), Solution(c), false)
	require.NoError(t, err)
	defer second.Close()
	assert.Equal(t, slots, slotNames(t, dir), "one slot for one kind of build")
	assert.Equal(t, string(overlay), string(must(os.ReadFile(filepath.Join(dir, slots[0], "overlay.json")))))
	assert.FileExists(t, filepath.Join(dir, slots[0], "worker"+exe()))
	assert.NotEqual(t, first.prog.bin, second.prog.bin)
	r := second.Check(ctx, "once", Options{})
	assert.True(t, r.Verdict.Pass, "the copied program runs: %+v", r)

	withRace, err := Build(ctx, root(t), Solution(c), true)
	require.NoError(t, err)
	defer withRace.Close()
	assert.Len(t, slotNames(t, dir), 2, "another kind of build, another slot")
}

// Files from outside the checkout (a class's submissions) are built in the
// worker's own folder: a slot for each would fill the disk.
func TestSubmissionsGetNoSlot(t *testing.T) {
	dir := slotsIn(t)
	c, _ := checker.Find(1)
	sub := t.TempDir()
	src := must(os.ReadFile(filepath.Join(root(t), "solutions", c.Dir(), "shop.go")))
	require.NoError(t, os.WriteFile(filepath.Join(sub, "shop.go"), src, 0o644))
	w, err := Build(context.Background(), root(t), Target{Case: c, Pkg: Student(c).Pkg, Src: sub}, false)
	require.NoError(t, err)
	defer w.Close()
	assert.Empty(t, slotNames(t, dir))
	assert.True(t, inCheckout(root(t), []Target{Solution(c), fixture("panics")}))
	assert.False(t, inCheckout(root(t), []Target{{Src: "relative/path"}}))
}

// Builds of one slot at once wait for each other, and each gets a whole
// program.
func TestBuildsAtOnceShareTheirSlot(t *testing.T) {
	slotsIn(t)
	c, _ := checker.Find(1)
	ctx := context.Background()
	var wg sync.WaitGroup
	ws := make([]*Worker, 3)
	errs := make([]error, 3)
	for i := range ws {
		wg.Go(func() { ws[i], errs[i] = Build(ctx, root(t), Solution(c), false) })
	}
	wg.Wait()
	for i, w := range ws {
		require.NoError(t, errs[i])
		defer w.Close()
		assert.True(t, w.Check(ctx, "once", Options{}).Verdict.Pass, "build %d", i)
	}
}

// A trim removes the slots unused for slotTrimAge and not in use, once a
// day at most.
func TestTrimSlots(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	long := time.Now().Add(-slotTrimAge - time.Hour)
	slotAt := func(key string, used time.Time) *slot {
		s, err := openSlot(ctx, dir, key)
		require.NoError(t, err)
		require.NotNil(t, s)
		require.NoError(t, os.WriteFile(filepath.Join(s.dir, "worker"), []byte("program"), 0o755))
		require.NoError(t, os.Chtimes(filepath.Join(s.dir, "lock"), used, used))
		return s
	}
	slotAt("old", long).close()
	slotAt("fresh", time.Now()).close()
	busy := slotAt("busy", long) // held, as a build holds it

	trimSlots(dir, time.Now())
	assert.Equal(t, []string{"busy", "fresh"}, slotNames(t, dir))
	busy.close()
	trimSlots(dir, time.Now())
	assert.Equal(t, []string{"busy", "fresh"}, slotNames(t, dir), "a second trim within a day does nothing")
	trimSlots(dir, time.Now().Add(slotTrimEvery+time.Minute))
	assert.Equal(t, []string{"fresh"}, slotNames(t, dir))

	again, err := openSlot(ctx, dir, "old")
	require.NoError(t, err)
	defer again.close()
	assert.FileExists(t, filepath.Join(again.dir, "lock"), "a slot trimmed away is made anew")
}
