"""CPU of ``prepare_file`` (conversion, summary, SQLite row load) per kind of file.

    python bench_per_kind.py EXPORT [--ext .csv --ext .docx ...] [--repeat 3]

Runs every file of the chosen extensions through ``prepare_file`` in this process
(imports warmed by one file first), ``--repeat`` times, and prints per extension the
median CPU seconds (``time.process_time``) over the rounds. Run it with another
checkout's interpreter to measure that checkout: it imports whatever the
interpreter has installed.
"""
from __future__ import annotations

import argparse
import collections
import os
import statistics
import tempfile
import time
from pathlib import Path

from monkeyllm_gardener.host import HostSpec
from monkeyllm_gardener.worker import prepare_file


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("export", type=Path)
    parser.add_argument("--ext", action="append", default=None, help="e.g. .csv (repeatable; default all)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    wanted = {e.lower() for e in args.ext} if args.ext else None
    files = sorted(p for p in args.export.rglob("*") if p.is_file()
                   and (wanted is None or p.suffix.lower() in wanted))
    spec = HostSpec()
    rounds: dict[str, list[float]] = collections.defaultdict(list)
    counts: collections.Counter[str] = collections.Counter(p.suffix.lower() for p in files)
    with tempfile.TemporaryDirectory() as tmp:
        for path in files[:1]:  # warm the imports
            prepare_file(spec, str(path), path.name, None, tmp)
        for _ in range(args.repeat):
            spent: collections.Counter[str] = collections.Counter()
            for path in files:
                start = time.process_time()
                prepare_file(spec, str(path), str(path.relative_to(args.export)), None, tmp)
                spent[path.suffix.lower()] += time.process_time() - start
            for ext in counts:
                rounds[ext].append(spent[ext])
            for name in os.listdir(tmp):
                os.unlink(os.path.join(tmp, name))
    for ext in sorted(counts):
        median = statistics.median(rounds[ext])
        shown = " ".join(f"{s:.3f}" for s in rounds[ext])
        print(f"{ext:8} {counts[ext]:5} files  median {median:7.3f} s CPU  "
              f"{median / counts[ext] * 1000:6.1f} ms/file  rounds: {shown}")


if __name__ == "__main__":
    main()
