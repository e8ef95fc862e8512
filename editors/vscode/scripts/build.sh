#!/usr/bin/env bash
# Type-check, bundle, unit-test and package the extension; check what the .vsix holds.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error
npx tsc --noEmit -p .
npm run -s test:unit
rm -rf out/extension.js repodoc-*.vsix
# no separate bundling step: `vsce package` alone builds the bundle (vscode:prepublish)
npx vsce package --no-dependencies -o repodoc-0.1.0.vsix >/dev/null
python3 - <<'PY'
import json, sys, zipfile
names = set(zipfile.ZipFile("repodoc-0.1.0.vsix").namelist())
for needed in ("extension/package.json", "extension/out/extension.js", "extension/readme.md",
               "extension/LICENSE.txt", "extension.vsixmanifest"):
    if needed not in names:
        sys.exit(f"the .vsix lacks {needed}")
manifest = json.loads(zipfile.ZipFile("repodoc-0.1.0.vsix").read("extension/package.json"))
assert manifest["main"] == "./out/extension.js" and manifest["name"] == "repodoc", manifest
assert not any(n.startswith("extension/node_modules/") for n in names), "dependencies must be bundled"
assert not any(n.startswith("extension/src/") for n in names), "sources are not shipped"
print(f"repodoc-0.1.0.vsix: {len(names)} files, bundle and manifest present")
PY
