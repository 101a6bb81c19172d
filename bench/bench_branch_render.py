"""One branch passport rendered and parsed back, as every plant beneath it does.

The coverage changes on each render, as it does between two plants. CPU time per
render (``time.process_time``); run it with each tree's interpreter, one after the
other, to compare two trees:

    .venv/bin/python bench/bench_branch_render.py [--renders 3000]
"""
from __future__ import annotations

import argparse
import time

from monkeyllm_core.forest import passport


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--renders", type=int, default=3000)
    args = parser.parse_args()
    fm = {"id": "d1/s2/t1/_index", "type": "branch", "title": "T1",
          "summary": "Documents adopted from source folder 't1'.", "created": "2026-12-01",
          "updated": "2026-12-01", "source": "ingest", "origin": "file:///exports/d1/s2/t1",
          "source_path": "d1/s2/t1", "coverage": "0 bananas, 0 sub-branches"}
    body = "# T1\n\n> x\n\n## Direct bananas\n" + "".join(f"- [[d1/n{i}]] \u2014 Note {i}.\n" for i in range(40))
    started = time.process_time()
    for i in range(args.renders):
        fm["coverage"] = f"{i % 50} bananas, 0 sub-branches"
        passport.render_node_parsed(fm, body)
    print(f"{(time.process_time() - started) / args.renders * 1e6:.1f} us CPU per branch render + parse")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
