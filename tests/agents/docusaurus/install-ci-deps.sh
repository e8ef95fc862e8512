#!/usr/bin/env bash
# Docusaurus 3 for tests/agents/test_docusaurus.py: the exact versions of package.json beside this
# script, installed from the npm registry into a cache folder outside the repository, once per
# machine (again only when package.json changes). About 2 minutes and 350 MB. Idempotent.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DEST="${XDG_CACHE_HOME:-$HOME/.cache}/repodoc-ci/docusaurus"
SUM=$(sha256sum "$HERE/package.json" | cut -d' ' -f1)
if [ "$(cat "$DEST/.repodoc-package-sha256" 2>/dev/null)" != "$SUM" ]; then
  rm -rf "$DEST" && mkdir -p "$DEST"
  cp "$HERE/package.json" "$DEST/"
  (cd "$DEST" && npm install --no-audit --no-fund --loglevel=error > install.log 2>&1) || { tail -20 "$DEST/install.log" >&2; exit 1; }
  echo "$SUM" > "$DEST/.repodoc-package-sha256"
fi
echo "docusaurus: $(node -p "require('$DEST/node_modules/@docusaurus/core/package.json').version")"
