"""``vine snapshot create | restore``: a forest backed up as one file, and brought back.

A thin layer like the rest of the CLI over ``monkeyllm_core.snapshot``: parse,
call, print. Without ``--json`` the output is lines for a person and an
expected error is one line on stderr (exit 2); with ``--json`` stdout holds the
result, or the error's envelope (exit 2), and nothing else.

``create`` without FILE writes ``<forest folder>-<YYYY-MM-DD-HHMMSS>.bundle`` in
the current folder (local time, to the second, so two snapshots of a day do not
collide; beside the forest when the current folder is inside it), and with
``--with-payloads`` the sidecar ``<FILE>.payloads.tar`` beside it. ``restore`` takes the sidecar only when ``--payloads`` names it: a restore
without it is a forest whose payloads are not present, and says so.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any, Callable

from monkeyllm_core import VineError

EXIT_OK, EXIT_USAGE = 0, 2


def snapshot_arguments(snapshot: argparse.ArgumentParser, forest_arg: Callable[[argparse.ArgumentParser], None],
                       forest_of: Callable[[argparse.Namespace], Path]) -> None:
    """The two verbs of ``vine snapshot`` and their arguments (``cli.COMMANDS``)."""
    verbs = snapshot.add_subparsers(dest="snapshot_command", required=True)

    p = verbs.add_parser("create", help="write a git bundle of the whole history (and a payload sidecar)")
    p.add_argument("file", nargs="?", help="the bundle to write (default: <forest>-<date-time>.bundle here)")
    forest_arg(p)
    p.add_argument("--with-payloads", action="store_true",
                   help="also write FILE.payloads.tar with every payload a passport names, each hash-checked")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=lambda args: _run(args, lambda: _create(args, forest_of(args)), show_created))

    p = verbs.add_parser("restore", help="restore a snapshot into a new folder, history and payloads")
    p.add_argument("file", help="the .bundle vine snapshot create wrote")
    p.add_argument("--forest", required=True, help="the folder to restore into; it must not exist")
    p.add_argument("--traceback", action="store_true", default=argparse.SUPPRESS,
                   help="re-raise errors with a traceback")
    p.add_argument("--payloads", metavar="SIDECAR", help="the .payloads.tar written beside the bundle")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=lambda args: _run(args, lambda: _restore(args), show_restored))


def default_bundle_name(forest: Path, now: dt.datetime | None = None) -> Path:
    """``<forest>-<date>-<time>.bundle`` in the current folder, or beside the forest
    when the current folder is inside it (a backup is no file of the forest's)."""
    stamp = (now or dt.datetime.now()).strftime("%Y-%m-%d-%H%M%S")
    here = Path.cwd().resolve()
    folder = forest.parent if here == forest or forest in here.parents else here
    return folder / f"{forest.name}-{stamp}.bundle"


def _create(args: argparse.Namespace, forest: Path) -> Any:
    from monkeyllm_core.snapshot.create import create_snapshot
    target = Path(args.file) if args.file else default_bundle_name(forest)
    return create_snapshot(forest, target, with_payloads=args.with_payloads)


def _restore(args: argparse.Namespace) -> Any:
    from monkeyllm_core.snapshot.restore import restore_snapshot
    return restore_snapshot(Path(args.file), Path(args.forest), Path(args.payloads) if args.payloads else None)


def _run(args: argparse.Namespace, call: Callable[[], Any], show: Callable[[Any], str]) -> int:
    try:
        result = call()
    except VineError as exc:
        if not args.json:
            raise  # the CLI's one-line error, exit 2
        _write(json.dumps(exc.envelope(), ensure_ascii=False))
        return EXIT_USAGE
    _write(json.dumps(result.to_dict(), ensure_ascii=False, indent=2) if args.json else show(result))
    return EXIT_OK


def _write(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()


def _size(count: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if count < 1024 or unit == "GiB":
            return f"{count} {unit}" if unit == "bytes" else f"{count:.1f} {unit}"
        count /= 1024
    raise AssertionError("unreachable")


def _branch(ref: str) -> str:
    return ref.removeprefix("refs/heads/")


def show_created(made: Any) -> str:
    lines = [f"snapshot: {made.bundle} ({_size(made.bundle_bytes)}; {made.commits} commit(s), {made.refs} ref(s), "
             f"HEAD {made.commit[:12]} on {_branch(made.branch)})"]
    if made.sidecar is not None:
        lines.append(f"payloads: {made.payloads} payload(s), {_size(made.payload_bytes)}, each checked against its "
                     f"payload_hash: {made.sidecar}")
    else:
        lines.append("payloads: not carried (payloads never enter git; --with-payloads writes them beside the bundle)")
    lines += [f"warning: {line}" for line in made.warnings]
    return "\n".join(lines)


def show_restored(restored: Any) -> str:
    lines = [f"restored: {restored.forest} (branch {_branch(restored.branch)}, HEAD {restored.commit[:12]}, "
             f"{restored.refs} ref(s))"]
    if restored.absent:
        lines.append(f"payloads: {len(restored.absent)} not present: pass --payloads SIDECAR to restore them")
    else:
        lines.append(f"payloads: {restored.payloads} put in place, each matching its passport's payload_hash")
    lines.append(f"validate: {restored.nodes} node(s), 0 error(s), {len(restored.warnings)} warning(s)")
    lines += restored.warnings
    return "\n".join(lines)
