#!/usr/bin/env bash
# The main job on a fresh machine: install, create a forest, adopt the bundled
# fixtures/ export into it and print the report.
#
#   bash scripts/demo.sh [FOREST_DIR]
#
# The fixture export holds one deliberately broken file (finance/broken.xlsx), so
# the report lists one error and `vine adopt` exits 1: that is the product telling
# you a file failed, not the demo failing.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
venv=${MONKEYLLM_VENV:-$repo/.venv}
forest=${1:-$(mktemp -d /tmp/monkeyllm-demo.XXXXXX)/forest}

if [ ! -x "$venv/bin/vine" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q -e "$repo[ingest]"
fi
vine="$venv/bin/vine"

"$vine" init --forest "$forest" --title "Ops brain"
# The PDF in the export is converted by a command hook: a tool named in the
# forest's _meta/gardener.yaml (see fixtures/gardener.yaml). Its path must be
# absolute because the tool runs in a temporary working directory.
cat > "$forest/_meta/gardener.yaml" <<YAML
converters:
  ".pdf": '"$venv/bin/python" "$repo/fixtures/tools/pdf2md.py" "{input}" "{output}"'
YAML

set +e
"$vine" adopt "$repo/fixtures/export" --forest "$forest"
status=$?
set -e
echo
echo "forest: $forest"
"$vine" validate --forest "$forest" | tail -n 1
"$vine" query finance/invoices-2026-q1 --forest "$forest" \
  "SELECT customer, ROUND(SUM(total_usd), 2) AS billed FROM invoices_2026_q1 WHERE status = 'F' GROUP BY customer ORDER BY billed DESC LIMIT 3"
# 0: every file planted; 1: some files failed and are listed above (expected here)
[ "$status" -le 1 ] || exit "$status"
