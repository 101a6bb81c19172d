"""``vine ranger [--forest DIR] [--every SECONDS] [--dry-run] [--json]``: the maintenance pass.

One cycle by default (``monkeyllm_core.ranger.run_cycle``), then exit: 0, or 1
when a node's edit failed (named in the report), or 2 for an expected error (a
bad ``_meta/ranger.yaml``, another writer holding the lock), one line on stderr.

With ``--every SECONDS`` it runs as a service: a cycle, then a wait, again. Each
cycle opens its own writable Vine, so the writer lock is held during a cycle and
released between them, and ``vine sync`` runs in the gaps. A cycle that meets a
held lock prints one ``note:`` line on stderr and waits for the next turn; a bad
``ranger.yaml`` is a note too (fixing the file is the next turn's business).
SIGTERM (and SIGINT) let the cycle under way finish, then the command exits 0; in
the wait, it exits at once.

``--json`` prints the report exactly (``RangerReport.to_dict``): one JSON object,
or with ``--every`` one per line (JSON Lines), and nothing else on stdout.
"""
from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from monkeyllm_core import VineError
if TYPE_CHECKING:  # the engine is imported by the command that runs, not by `vine --help`
    from monkeyllm_core.ranger import RangerReport

EXIT_OK, EXIT_FAILED = 0, 1
LISTED = 10  # items of a list the text report names before "... and N more"


def ranger_arguments(p: argparse.ArgumentParser, forest_arg: Callable[[argparse.ArgumentParser], None],
                     forest_of: Callable[[argparse.Namespace], Path]) -> None:
    forest_arg(p)
    p.add_argument("--every", type=float, metavar="SECONDS", help="run a cycle every SECONDS until SIGTERM")
    p.add_argument("--dry-run", action="store_true", help="report what a cycle would change, change nothing")
    p.add_argument("--json", action="store_true", help="print the report as JSON (one object per cycle)")
    p.set_defaults(func=lambda args: cmd_ranger(args, forest_of))


def cmd_ranger(args: argparse.Namespace, forest_of: Callable[[argparse.Namespace], Path]) -> int:
    forest = forest_of(args)
    if args.every is None:
        from monkeyllm_core.ranger import run_cycle
        report = run_cycle(forest, dry_run=args.dry_run)
        _show(report, args.json)
        return EXIT_FAILED if report.failed else EXIT_OK
    if not args.every > 0:
        from .cli import UsageError
        raise UsageError(f"--every must be a positive number of seconds, not {args.every:g}",
                         "e.g. --every 3600 for a cycle an hour.")
    return _serve(forest, args)


def _serve(forest: Path, args: argparse.Namespace) -> int:
    stop = threading.Event()

    def on_signal(_signum: int, _frame: Any) -> None:
        stop.set()  # the cycle under way finishes; the wait ends at once

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, on_signal)
    from monkeyllm_core.ranger import PayloadHashes, run_cycle
    hashes = PayloadHashes()  # payloads whose size and mtime hold still are hashed once
    while not stop.is_set():
        try:
            report = run_cycle(forest, dry_run=args.dry_run, payload_hashes=hashes)
        except VineError as exc:
            if exc.code not in ("E_LOCKED", "E_SCHEMA"):
                raise
            sys.stderr.write(f"note: cycle skipped, {exc.one_line()}; next turn in {args.every:g} s\n")
            sys.stderr.flush()
        else:
            _show(report, args.json)
        stop.wait(args.every)
    return EXIT_OK


def _show(report: RangerReport, as_json: bool) -> None:
    text = json.dumps(report.to_dict(), ensure_ascii=False) if as_json else render_text(report)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def render_text(report: RangerReport) -> str:
    data = report.to_dict()
    links, health = data["links"], data["health"]
    would = "would be " if report.dry_run else ""
    lines = [f"ranger: {report.forest}" + (" (dry run: nothing written)" if report.dry_run else "")]
    lines += [f"warning: _meta/ranger.yaml: unknown key {key} ignored" for key in data["unknown_keys"]]
    evaporation = data["evaporation"]
    lines.append(f"evaporation: {evaporation['heat_rows']} cold heat row(s), {evaporation['session_rows']} "
                 f"expired session row(s) {would}deleted")
    lines.append(f"promoted: {len(links['promoted'])} link(s) {would}raised to "
                 f"{data['settings']['promoted_confidence']:g}")
    lines += _listed([f"  {e['node']}: {e['rel']} -> {e['target']} ({e['confidence']:g})" for e in links["promoted"]])
    lines.append(f"pruned: {len(links['pruned'])} link(s) {would}removed")
    lines += _listed([f"  {e['node']}: {e['rel']} -> {e['target']} ({e['confidence']:g})" for e in links["pruned"]])
    landmarks = data["landmarks"]
    state = ("would be rewritten" if report.dry_run else "rewritten") if landmarks["changed"] else "unchanged"
    lines.append(f"landmarks: {state}, {len(landmarks['nodes'])} node(s)"
                 + (": " + ", ".join(f"{n['id']} ({n['degree']})" for n in landmarks["nodes"]) if landmarks["nodes"] else ""))
    lines.append("health:")
    lines.append(f"  branches that need a split: {len(health['needs_split'])}")
    lines += _listed([f"    {b['id']}: {b['why']}" for b in health["needs_split"]])
    lines.append(f"  nodes over 50 links: {len(health['over_connected'])}")
    lines += _listed([f"    {n['id']}: {n['degree']} links" for n in health["over_connected"]])
    checked = health["validate"]
    lines.append(f"  validate: {len(checked['errors'])} error(s), {checked['warnings']} warning(s)"
                 + (f" (note: {checked['note']})" if checked["note"] else ""))
    lines += _listed([f"    {line}" for line in checked["errors"]])
    lines.append(f"  sources missing: {len(health['sources_missing'])}")
    lines += _listed([f"    {s['id']}: {s['source'] or '(no origin)'}" + (" (marked stale)" if s["marked_stale"] else "")
                      for s in health["sources_missing"]])
    uncertain = health["uncertain_links"]
    lines.append(f"  uncertain links: {uncertain['total']} ("
                 + ", ".join(f"{band}: {n}" for band, n in uncertain["bands"].items()) + ")")
    heat = health["heat"]
    lines.append(f"  heat: {heat['rows']} row(s), {heat['session_rows']} session row(s) in {heat['sessions']} "
                 f"session(s), {heat['bytes']} bytes; max {heat['max']:g}, median {heat['median']:g} ("
                 + ", ".join(f"{band}: {n}" for band, n in heat["bands"].items()) + ")")
    payloads = health["payloads"]
    lines.append(f"  payloads: {payloads['checked']} checked, {len(payloads['missing'])} missing, "
                 f"{len(payloads['drifted'])} drifted")
    lines += _listed([f"    missing: {node}" for node in payloads["missing"]]
                     + [f"    drifted: {node}" for node in payloads["drifted"]])
    lines.append(f"  payload cache: {health['payload_cache']['note']}")
    lines += [f"failed: {line}" for line in data["failed"]]
    lines.append(f"ranger: {len(data['commits'])} commit(s) in {data['seconds']:.2f} s")
    return "\n".join(lines)


def _listed(lines: list[str]) -> list[str]:
    if len(lines) <= LISTED:
        return lines
    return lines[:LISTED] + [f"    ... and {len(lines) - LISTED} more (--json lists them all)"]
