"""Adopt a folder of real-world test files and count, per extension, where each
file ended: planted, unsupported, errors, with the warnings raised.

    python bench/bench_corpus.py CORPUS_DIR [--keep FOREST] [--json]

The corpus is any folder: the public test corpora we try (markitdown's,
python-docx's, mammoth's, xlrd's, csv-spectrum's test files) are not shipped with
the project; copy them into one folder and point this at it. It runs the real
`vine init` and `vine adopt --json` in subprocesses, then `vine validate`, and
prints one row per extension plus the totals, the wall time and every error line.
"""
from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

VINE = [sys.executable, "-m", "monkeyllm_gardener.cli"]


def _extension(rel: str) -> str:
    name = rel.rsplit("/", 1)[-1]
    return ("." + name.rsplit(".", 1)[-1].lower()) if "." in name[1:] else "(none)"


def _rel_of(line: str) -> str:
    return line.split(": ", 1)[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--keep", type=Path, help="write the forest here (kept) instead of a temp folder")
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")
    args = parser.parse_args()
    corpus = args.corpus.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        forest = args.keep or Path(tmp) / "forest"
        subprocess.run([*VINE, "init", "--forest", str(forest), "--title", "Corpus"], check=True,
                       capture_output=True)
        started = time.perf_counter()
        proc = subprocess.run([*VINE, "adopt", str(corpus), "--forest", str(forest), "--json"],
                              capture_output=True, text=True)
        elapsed = time.perf_counter() - started
        report = json.loads(proc.stdout)
        validate = subprocess.run([*VINE, "validate", "--forest", str(forest)], capture_output=True, text=True)
        planted_rels = {}
        for node_id in report["planted"]:
            text = (forest / f"{node_id}.md").read_text(encoding="utf-8")
            for line in text.splitlines():
                if line.startswith("source_path: "):
                    planted_rels[node_id] = line.split(": ", 1)[1].strip("'\"")
                    break
    rows: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for rel in planted_rels.values():
        rows[_extension(rel)]["planted"] += 1
    for name in ("unsupported", "errors", "warnings"):
        for line in report[name]:
            rows[_extension(_rel_of(line))][name] += 1
    totals = collections.Counter()
    for counts in rows.values():
        totals.update(counts)
    if args.json:
        print(json.dumps({"rows": rows, "totals": totals, "seconds": round(elapsed, 2),
                          "validate_exit": validate.returncode}, indent=2))
        return 0
    print(f"{'extension':<10} {'planted':>8} {'unsupported':>12} {'errors':>7} {'warnings':>9}")
    for ext in sorted(rows):
        c = rows[ext]
        print(f"{ext:<10} {c['planted']:>8} {c['unsupported']:>12} {c['errors']:>7} {c['warnings']:>9}")
    print(f"{'total':<10} {totals['planted']:>8} {totals['unsupported']:>12} {totals['errors']:>7} "
          f"{totals['warnings']:>9}")
    print(f"adopt: {elapsed:.2f} s, exit {proc.returncode}; validate exit {validate.returncode}")
    for line in report["errors"]:
        print(f"  error: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
