# The lab's own tests. `make test` is what CI runs: formatting, vet, every
# test with the race detector on, and the proof of the lab (each reference
# solution passes every check; each shipped case and known-wrong answer
# fails what it is meant to fail; each known-right answer passes).

GO ?= go

.PHONY: test fmt vet unit bench

test: fmt vet unit

fmt:
	@out=$$(gofmt -l . | grep -v '/testdata/' || true); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	@if grep -rnE '^(<<<<<<< |>>>>>>> )' --include='*.go' --include='*.md' --include='*.sh' \
		--include='*.yml' --include='Makefile' --exclude-dir=.git . ; then \
		echo "merge conflict markers left in the files above"; exit 1; fi

vet:
	$(GO) vet ./...

unit:
	$(GO) test -race -count=1 -timeout 30m ./...

# What the reference solutions cost: the hit path (50 goroutines reading a
# warm key) and the burst path (50 finding it cold), beside a map behind a
# sync.RWMutex with x/sync/singleflight. Not part of `make test`: timings
# are not verdicts. Six runs each, summarized by benchstat when the Go
# module proxy can fetch it, else printed as they are. docs/design.md has
# the results and how they were measured.
BENCH_COUNT ?= 6
bench:
	$(GO) test -run '^$$' -bench . -count $(BENCH_COUNT) ./checker/compare/ | tee bench.txt
	@$(GO) run golang.org/x/perf/cmd/benchstat@latest bench.txt 2>/dev/null || \
		echo "(benchstat unavailable: the raw runs are in bench.txt; take each benchmark's median by hand)"
