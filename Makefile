# The lab's own tests. `make test` is what CI runs: formatting, vet, every
# test with the race detector on, and the proof of the lab (each reference
# solution passes every check; each shipped case and known-wrong answer
# fails what it is meant to fail; each known-right answer passes).

GO ?= go

# The tests are built as the grader builds every worker (checker/grade),
# so that each package is compiled once with the race detector for both;
# built without -trimpath, the tests compiled the whole lab a third time
# (after vet's plain build), inside the first test that built a worker.
LABFLAGS := -race -trimpath

.PHONY: test fmt vet unit proof bench

test: fmt vet unit

fmt:
	@out=$$(gofmt -l . | grep -v '/testdata/' || true); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	@if grep -rnE '^(<<<<<<< |>>>>>>> )' --include='*.go' --include='*.md' --include='*.sh' \
		--include='*.yml' --include='Makefile' --exclude-dir=.git . ; then \
		echo "merge conflict markers left in the files above"; exit 1; fi

# Each step says how long it took (go test names each package's time too).
# Vet is given the tests' build flags so that the packages it compiles to
# check the lab are the ones the tests and the workers then link: without
# them a fresh clone compiled everything twice, which was 90 s of the
# processors' time on two cores. With -race, vet reads the files built for
# the race detector, not the few marked !race (one constant in compare).
VET := $(GO) vet $(LABFLAGS) ./...
vet:
	@echo "$(VET)"; t=$$(date +%s); $(VET) && echo "make vet took $$(( $$(date +%s) - t )) s"

# The library first and the shop's tests beside it: they are the two
# longest, and two packages run at a time, so that the rest share out
# between the two behind them (shop last left one processor alone for
# its last 200 s).
UNIT := $(GO) test $(LABFLAGS) -count=1 -timeout 30m ./checker/library ./shop ./...
unit:
	@echo "$(UNIT)"; t=$$(date +%s); $(UNIT) && echo "make unit took $$(( $$(date +%s) - t )) s"

# The long proofs, not part of `make test`: the library with every check
# run three times, and every right answer of every case through SCENES
# explorer scenes in a row (1,000; SCENES=10000 is the full proof, hours
# on two cores). .ci/proof says how, and docs/design.md how long it takes.
SCENES ?= 1000
proof:
	GO=$(GO) SCENES=$(SCENES) .ci/proof

# What the reference solutions cost: the hit path (50 goroutines reading a
# warm key) and the burst path (50 finding it cold), beside a map behind a
# sync.RWMutex with x/sync/singleflight. Not part of `make test`: timings
# are not verdicts. Six runs each, summarized by benchstat when the Go
# module proxy can fetch it, else printed as they are. docs/benchmarks.md has
# the results and how they were measured.
BENCH_COUNT ?= 6
bench:
	$(GO) test -run '^$$' -bench . -count $(BENCH_COUNT) ./checker/compare/ | tee bench.txt
	@$(GO) run golang.org/x/perf/cmd/benchstat@latest bench.txt 2>/dev/null || \
		echo "(benchstat unavailable: the raw runs are in bench.txt; take each benchmark's median by hand)"
