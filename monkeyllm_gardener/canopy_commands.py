"""``vine canopy build|status``: the optional vector layer (monkeyllm_core.canopy).

    vine canopy build  [--forest DIR] [--batch N] [--workers N] [--json]
    vine canopy status [--forest DIR] [--json]

``build`` embeds the node summaries that changed since the last build through the
``MONKEYLLM_EMBED_*`` endpoint and prints what it embedded, kept and dropped, and
the time; ``status`` prints the model, dimension, count, build time and the stale
count (nodes written since the last build), asking no endpoint. A dead or refusing
endpoint, a missing setting, another build running: one line on stderr, exit 2,
and the previous canopy is untouched. ``--json`` prints the report alone.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable

EXIT_OK = 0


def canopy_arguments(canopy: argparse.ArgumentParser, forest_arg: Callable[[argparse.ArgumentParser], None],
                     forest_of: Callable[[argparse.Namespace], Path]) -> None:
    verbs = canopy.add_subparsers(dest="canopy_command", required=True)
    p = verbs.add_parser("build", help="embed the summaries that changed since the last build")
    forest_arg(p)
    p.add_argument("--batch", type=int, default=64, help="summaries per request (default 64)")
    p.add_argument("--workers", type=int, default=4, help="requests in flight (default 4)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=lambda args: cmd_build(args, forest_of))
    p = verbs.add_parser("status", help="model, count and stale count of the canopy")
    forest_arg(p)
    p.add_argument("--json", action="store_true", help="print the status as JSON")
    p.set_defaults(func=lambda args: cmd_status(args, forest_of))


def cmd_build(args: argparse.Namespace, forest_of: Callable[[argparse.Namespace], Path]) -> int:
    from monkeyllm_core import Vine
    forest = forest_of(args)
    with Vine(forest, writable=False) as vine:
        report = vine.canopy_build(batch=args.batch, workers=args.workers)
    _print(json.dumps(report, ensure_ascii=False) if args.json else build_text(report))
    return EXIT_OK


def cmd_status(args: argparse.Namespace, forest_of: Callable[[argparse.Namespace], Path]) -> int:
    from monkeyllm_core import Vine
    forest = forest_of(args)
    with Vine(forest, writable=False) as vine:
        status = vine.canopy_status()
    _print(json.dumps(status, ensure_ascii=False) if args.json else status_text(status))
    return EXIT_OK


def build_text(report: dict[str, Any]) -> str:
    lines = []
    if report.get("previous_model"):
        lines.append(f"note: the canopy was built with {report['previous_model']}; every summary embedded again "
                     f"with {report['model']}")
    resumed = f", {report['resumed']} resumed from an unfinished build" if report.get("resumed") else ""
    lines.append(f"canopy: {report['embedded']} embedded, {report['kept']} kept{resumed}, {report['dropped']} "
                 f"dropped; {report['count']} vector(s) of {report['dimension']} dimensions, model "
                 f"{report['model']}, in {report['seconds']:.2f} s (CPU {report['cpu_seconds']:.2f} s)")
    return "\n".join(lines)


def status_text(status: dict[str, Any]) -> str:
    stale = status["stale"]
    debt = (f"stale: {stale['total']} ({stale['missing']} without a vector, {stale['changed']} changed, "
            f"{stale['deleted']} deleted)")
    lines = []
    if status["built"]:
        lines.append(f"canopy: model {status['model']}, {status['dimension']} dimensions, {status['count']} "
                     f"vector(s), built {status['built_at']}")
    elif status.get("unreadable"):
        lines.append("canopy: _derived/canopy.db is not a whole index (torn or edited by hand); run `vine canopy "
                     "build` to make a new one; locate ranks by BM25 alone")
    else:
        lines.append("canopy: none built (run `vine canopy build`); locate ranks by BM25 alone")
    lines.append(debt)
    if status.get("staged"):
        lines.append(f"staged: {status['staged']} vector(s) from an unfinished build (the next build keeps them)")
    if status["embedder"] is None:
        lines.append("query embedder: none (set MONKEYLLM_EMBED_ENDPOINT and MONKEYLLM_EMBED_MODEL)")
    elif status.get("embedder_matches") is False:
        lines.append(f"query embedder: {status['embedder']}, not the canopy's model: locate ignores the canopy")
    else:
        lines.append(f"query embedder: {status['embedder']}")
    return "\n".join(lines)


def _print(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
