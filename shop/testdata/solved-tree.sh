#!/usr/bin/env bash
# Proves that the shop command's tests never grade the student's cases/, so
# that `make test` stays green on a student's clone however much is solved.
# It copies the lab's tracked files (with any edits not yet committed) to a
# scratch folder, solves every case there with the reference solution, and
# runs the command's tests in it.
#
#   shop/testdata/solved-tree.sh                 # go test -count=1 ./shop/...
#   shop/testdata/solved-tree.sh make test       # any command, in the solved tree
set -euo pipefail
lab="$(cd "$(dirname "$0")/../.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

git -C "$lab" ls-files -z | (cd "$lab" && tar --null -T - -cf -) | tar -xf - -C "$tmp"
for sol in "$lab"/solutions/case*/; do
	n="$(basename "$sol")"
	rm -f "$tmp/cases/$n"/*.go
	cp "$sol"*.go "$tmp/cases/$n/"
done
cd "$tmp"
for sol in solutions/case*/; do
	diff -r "$sol" "cases/$(basename "$sol")" >/dev/null || { echo "cases/$(basename "$sol") is not solved" >&2; exit 1; }
done
echo "every case in $tmp/cases is solved; running: ${*:-go test -count=1 ./shop/...}"
if [ $# -eq 0 ]; then
	set -- go test -count=1 ./shop/...
fi
"$@"
