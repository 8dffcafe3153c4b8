#!/usr/bin/env bash
# new.sh N SLUG "Title": lays out case N from the skeleton in this folder,
# as every case is laid out, and says what is left to write. Run it from
# the lab's folder: docs/new-case/new.sh 12 hot-key "The hot key".
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: docs/new-case/new.sh N SLUG \"Title\"" >&2; exit 2; }
n=$1 slug=$2 title=$3
nn=$(printf '%02d' "$n")
here=$(dirname "$0")
fill() { # fill TEMPLATE DEST
	[ -e "$2" ] && { echo "new.sh: $2 exists; nothing written" >&2; exit 1; }
	mkdir -p "$(dirname "$2")"
	sed -e "s/caseNN/case$nn/g" -e "s/NN-SLUG/$nn-$slug/g" -e "s/\bNN\b/$nn/g" \
		-e "s/\bN\b/$n/g" -e "s/TITLE/$title/g" "$1" >"$2"
}
fill "$here/shop.go.tmpl" "cases/case$nn/shop.go"
fill "$here/shop.go.tmpl" "checker/library/case$nn/shipped/shop.go"
fill "$here/solution.go.tmpl" "solutions/case$nn/shop.go"
fill "$here/checker.go.tmpl" "checker/case$nn/case$nn.go"
fill "$here/library_test.go.tmpl" "checker/library/case${nn}_test.go"
fill "$here/chapter.md.tmpl" "docs/$nn-$slug.md"
cat <<MSG
Laid out case $n. What is left:
 1. Register it: add case$nn.Case to checker.Cases() in checker/checker.go
    (and its import). That is its one entry.
 2. Write what lists the cases from the registry:
    go test ./checker ./shop -run 'TestGeneratedTexts|TestClassroomWorkflowIsWrittenFromTheRegistry' -update
 3. Write the case: the story, the broken code, the checks (each naming
    the wrong answer it catches), the solution, the library, the chapter.
    docs/design.md, "Adding a case", says what each needs.
 4. make test.
MSG
