#!/usr/bin/env bash
# A new user's first run, in CI (.ci/run) or by hand: bash tests/newuser/run.sh
#
# From a clean clone of this repository (what is committed), in a fresh virtual environment:
# the first command of README.md's "Quick start", exactly as written there; then `repodoc generate`
# on two real projects whose docs/ is their own Sphinx documentation (click's reST, attrs' MyST
# Markdown, from their sdists in ${XDG_CACHE_HOME:-~/.cache}/repodoc-bench/sdists, downloaded once).
# Checks: their docs/ keeps the same files, byte for byte; the pages go to repodoc-docs/, said in
# one line on the first run and not again; `repodoc generate --check` passes right after.
# Without network for the sdists it says so and stops with 0, unless REPODOC_REQUIRE_SDISTS=1.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/repodoc-bench
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export REPODOC_CACHE_DIR=$WORK/analysis-cache PIP_DISABLE_PIP_VERSION_CHECK=1
fail() { echo "newuser: FAIL: $*" >&2; exit 1; }

# The projects first: without them there is nothing to check.
for spec in click==8.1.8 attrs==24.2.0; do
  archive=$CACHE/sdists/${spec/==/-}.tar.gz
  if [ ! -f "$archive" ] && ! python3 -m pip download -q --no-deps --no-binary :all: "$spec" \
      -d "$CACHE/sdists" >/dev/null 2>&1; then
    if [ -n "${REPODOC_REQUIRE_SDISTS:-}" ]; then fail "cannot download the sdist of $spec"; fi
    echo "newuser: skipped: cannot download the sdist of $spec" >&2
    exit 0
  fi
  tar -xzf "$archive" -C "$WORK"
done

# The Quick start's first command, as README.md has it, in a clean clone.
git clone -q "$REPO" "$WORK/repodoc-lsp"
quick=$(awk '/^## Quick start/{s=1} s && /^```sh/{getline; print; exit}' "$REPO/README.md")
quick=${quick%%#*}
[ -n "$quick" ] || fail "no command under README.md's ## Quick start"
echo "newuser: $quick" >&2
(cd "$WORK/repodoc-lsp" && bash -c "$quick") > "$WORK/quick.out" 2> "$WORK/quick.err" \
  || { cat "$WORK/quick.err" >&2; fail "the Quick start's first command failed"; }
grep -q "pages written" "$WORK/quick.out" || fail "the Quick start wrote no pages: $(cat "$WORK/quick.out")"
repodoc=$WORK/repodoc-lsp/.venv/bin/repodoc

listing() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }
for project in "$WORK"/click-8.1.8 "$WORK"/attrs-24.2.0; do
  name=$(basename "$project")
  [ -f "$project/docs/conf.py" ] || fail "$name: no docs/conf.py: not the project expected"
  listing "$project/docs" > "$WORK/$name.before"
  (cd "$project" && "$repodoc" generate) > "$WORK/$name.out" 2> "$WORK/$name.err" \
    || { cat "$WORK/$name.err" >&2; fail "$name: repodoc generate failed"; }
  notice="repodoc: docs/ holds your own documentation (docs/conf.py); writing to repodoc-docs/ (set \`output\` in [tool.repodoc] to choose)"
  [ "$(cat "$WORK/$name.err")" = "$notice" ] || fail "$name: stderr is not the one notice: $(cat "$WORK/$name.err")"
  grep -q -- "-> $project/repodoc-docs\$" "$WORK/$name.out" || fail "$name: not written to repodoc-docs/"
  listing "$project/docs" | cmp -s - "$WORK/$name.before" || fail "$name: its docs/ changed"
  [ -f "$project/repodoc-docs/docs/index.md_docs.md" ] || [ -f "$project/repodoc-docs/docs/index.rst_docs.md" ] \
    || fail "$name: its own docs were not documented"
  (cd "$project" && "$repodoc" generate --check) > "$WORK/$name.check" 2>&1 \
    || { cat "$WORK/$name.check" >&2; fail "$name: generate --check failed right after generate"; }
  ! grep -q "repodoc-docs/" "$WORK/$name.check" || fail "$name: the notice came again"
  echo "newuser: $name: ok ($(tail -1 "$WORK/$name.out"))" >&2
done
echo "newuser: ok" >&2
