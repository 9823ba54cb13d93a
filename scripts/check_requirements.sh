#!/usr/bin/env bash
# CI: requirements-dev.txt (the test command's .venv) and requirements-release.txt
# (scripts/release.sh's .venv-release) each resolve with pip's resolver, from the package index
# alone: metadata only (PEP 658 files where the index serves them, else HTTP range requests into
# each wheel: --use-feature=fast-deps), no wheel downloaded, nothing installed. This machine's pip
# configuration is set aside (PIP_CONFIG_FILE=/dev/null, --isolated): a local constraint or wheel
# folder must not make a set resolve that a fresh machine's pip could not, or the reverse.
#
#   scripts/check_requirements.sh              # both; one to two minutes; needs the index (PyPI)
#   scripts/check_requirements.sh FILE...      # those requirement files
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
reqs=("$@")
[ ${#reqs[@]} -gt 0 ] || reqs=(requirements-dev.txt requirements-release.txt)
pids=()
for req in "${reqs[@]}"; do
  PIP_CONFIG_FILE=/dev/null "$PYTHON" -m pip --isolated install --dry-run --ignore-installed \
    --only-binary :all: --use-feature=fast-deps -v --report "$tmp/$(basename "$req").json" -r "$req" \
    >"$tmp/$(basename "$req").log" 2>&1 &
  pids+=($!)
done
rc=0
for i in "${!pids[@]}"; do wait "${pids[$i]}" || rc=1; done
"$PYTHON" - "$tmp" "${reqs[@]}" <<'PY' || rc=1
import json, re, sys
from pathlib import Path

tmp, reqs = Path(sys.argv[1]), sys.argv[2:]
ok = True
for req in reqs:
    log = (tmp / f"{Path(req).name}.log").read_text()
    report = tmp / f"{Path(req).name}.json"
    if not report.exists():
        print(f"{req}: pip did not resolve it:\n" + "\n".join(log.splitlines()[-25:]))
        ok = False
        continue
    got = {i["metadata"]["name"].lower().replace("_", "-"): i["metadata"]["version"]
           for i in json.loads(report.read_text())["install"]}
    pins = dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", Path(req).read_text(), re.M))
    wrong = {n: (v, got.get(n.lower().replace("_", "-"))) for n, v in pins.items()
             if got.get(n.lower().replace("_", "-")) != v}
    downloads = re.findall(r"^\s*Downloading (\S+\.whl)", log, re.M)
    if wrong or downloads:
        print(f"{req}: pins resolved otherwise {wrong}; wheels downloaded {downloads}")
        ok = False
        continue
    print(f"{req}: resolves, {len(got)} packages, metadata only: "
          + ", ".join(f"{n} {got[n.lower().replace('_', '-')]}" for n in pins))
sys.exit(0 if ok else 1)
PY
exit $rc
