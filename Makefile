# The lab's own tests. `make test` is what CI runs: formatting, vet, every
# test with the race detector on, and the proof of the lab (each reference
# solution passes every check; each shipped case and known-wrong answer
# fails what it is meant to fail; each known-right answer passes).

GO ?= go

.PHONY: test fmt vet unit

test: fmt vet unit

fmt:
	@out=$$(gofmt -l . | grep -v '/testdata/' || true); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

unit:
	$(GO) test -race -count=1 -timeout 30m ./...
