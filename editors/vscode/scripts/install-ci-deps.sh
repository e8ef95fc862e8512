#!/usr/bin/env bash
# What building and testing the extension needs, on a fresh Debian machine (as root):
# Debian packages, the extension's npm packages, and a real VS Code (code-server 4.100.3) with
# playwright-core, both in a cache folder outside the repository. Idempotent.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/repodoc-ci"
mkdir -p "$CACHE"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  missing=""
  for pkg in chromium libkrb5-dev pkg-config ripgrep curl; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing="$missing $pkg"
  done
  if [ -n "$missing" ]; then
    # a fresh machine has no package lists yet
    apt-get install -y -qq --no-install-recommends --dry-run $missing >/dev/null 2>&1 || apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
  fi
fi
# the extension's packages, unless node_modules already matches package-lock.json
LOCK_SUM=$(sha256sum "$HERE/package-lock.json" | cut -d' ' -f1)
if [ "$(cat "$HERE/node_modules/.repodoc-lock-sha256" 2>/dev/null)" != "$LOCK_SUM" ]; then
  (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$LOCK_SUM" > "$HERE/node_modules/.repodoc-lock-sha256"
fi
# code-server's @vscode/ripgrep would download its binary: seed its cache with Debian's rg.
RG=/tmp/vscode-ripgrep-cache-1.15.11
if [ ! -f "$RG/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" ]; then
  mkdir -p "$RG" && (cd "$RG" && cp "$(command -v rg)" rg && tar czf ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz rg && rm rg)
fi
if [ ! -x "$CACHE/code-server/node_modules/.bin/code-server" ]; then
  mkdir -p "$CACHE/code-server"
  (cd "$CACHE/code-server" && [ -f package.json ] || npm init -y >/dev/null)
  (cd "$CACHE/code-server" && npm_config_unsafe_perm=true npm_config_yes=true npm_config_nodedir=/usr \
     npm install --no-audit --no-fund --loglevel=error code-server@4.100.3 > install.log 2>&1)
fi
if [ ! -d "$CACHE/playwright/node_modules/playwright-core" ]; then
  mkdir -p "$CACHE/playwright"
  (cd "$CACHE/playwright" && [ -f package.json ] || npm init -y >/dev/null)
  (cd "$CACHE/playwright" && npm install --no-audit --no-fund --loglevel=error playwright-core@1.65.1 >/dev/null)
fi
echo "vscode: $("$CACHE/code-server/node_modules/.bin/code-server" --version | head -1), chromium: $(chromium --version)"
