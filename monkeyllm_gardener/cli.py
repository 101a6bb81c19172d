"""``vine``: a thin layer over the library. Parse arguments, call, print.

Exit codes: 0 all done; 1 some files failed (they are listed); 2 usage or an
expected error (one line with its hint, never a traceback; ``--traceback``
re-raises for debugging).

Each command imports what it runs, inside the function that runs it: building
the parser (``vine --help``) loads argparse and the command modules alone, and a
module that registers commands (``read_commands``) keeps its engine imports in
its command functions too.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing for `vine --help`
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Callable, Iterator, Sequence

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message, self.hint = message, hint


def _forest(args: argparse.Namespace) -> Path:
    from pathlib import Path
    from monkeyllm_core import VineError, is_forest
    forest = Path(args.forest or ".").resolve()
    if not is_forest(forest):
        raise VineError("E_NOT_A_FOREST", f"{forest} is not a forest (no _meta/schema.md)",
                        "Run `vine init --forest DIR --title TITLE` first, or pass --forest.")
    return forest


def _print(text: str) -> None:
    sys.stdout.write(text + ("\n" if not text.endswith("\n") else ""))
    sys.stdout.flush()


# -- commands ---------------------------------------------------------------------------
def cmd_init(args: argparse.Namespace) -> int:
    from monkeyllm_core import init_forest
    root = init_forest(args.forest or ".", args.title, args.summary)
    _print(f"forest '{args.title}' created at {root}")
    return EXIT_OK


def _curator(args: argparse.Namespace, forest: Path) -> Any:
    if not getattr(args, "curate", False):
        return None
    from .config import GardenerConfig
    from .curator import Curator, CuratorConfigError, CuratorSettings
    try:
        settings = CuratorSettings.from_env(os.environ)
        config = GardenerConfig.load(forest)
        curator = Curator(settings, directives=config.directives, default_tags=config.default_tags)
        curator.start()
    except CuratorConfigError as exc:
        # checked before any file is touched
        raise UsageError(str(exc), "Set the MONKEYLLM_LLM_* variables, or run without --curate.") from None
    return curator


def _progress(args: argparse.Namespace, verb: str) -> tuple[Callable[[str, int, int], None] | None, Callable[[], None]]:
    """A rich progress bar on stderr when it is a terminal (files in walk order)."""
    if getattr(args, "json", False) or not sys.stderr.isatty():
        return None, lambda: None
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                   transient=True)
    bar.start()
    task = bar.add_task(verb, total=None)

    def tick(_stage: str, done: int, total: int) -> None:
        bar.update(task, completed=done + 1, total=total)

    return tick, bar.stop


def _run_pipeline(args: argparse.Namespace, verb: str) -> int:
    forest = _forest(args)
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1", "Use --jobs 1 for a serial run.")
    executor = _executor(args)
    curator = _curator(args, forest)
    tick, stop = _progress(args, verb)
    with _stdout_kept_for(args.json):
        report = _run_verb(args, verb, forest, curator, executor, tick, stop)
    _print(report.to_json() if args.json else report.to_text(verbose=args.verbose))
    return EXIT_FAILED if report.failed else EXIT_OK


@contextlib.contextmanager
def _stdout_kept_for(json_report: bool) -> Iterator[None]:
    """With ``--json``, stdout must hold the JSON document alone: while the verb runs,
    file descriptor 1 points at stderr, so whatever else writes to it (a library's
    print, a worker process, a git child) lands there instead."""
    if not json_report:
        yield
        return
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def _executor(args: argparse.Namespace) -> Any:
    """Where the conversions run, checked before any file is touched: a Dask
    executor needs its extra installed (the scheduler is reached when the verb starts).
    None for the default, local processes: a run that converts nothing then never
    imports the executors."""
    if args.executor == "process" and not args.scheduler:
        return None
    from .executors import ExecutorChoice, import_distributed
    choice = ExecutorChoice(kind=args.executor, scheduler=args.scheduler)
    if choice.kind == "dask":
        import_distributed()
    return choice


def _run_verb(args: argparse.Namespace, verb: str, forest: Path, curator: Any, executor: Any,
              tick: Callable[[str, int, int], None] | None, stop: Callable[[], None]) -> Any:
    from pathlib import Path
    from .pipeline import Gardener
    jobs = args.jobs
    try:
        gardener = Gardener(forest, progress=tick)
        if verb == "adopt":
            source = Path(args.source)
            if not source.is_dir():
                raise UsageError(f"source {source} is not a folder", "Pass the export folder to adopt.")
            report = gardener.adopt(source, dest=args.dest or "", curator=curator, dry_run=args.dry_run, jobs=jobs,
                                    executor=executor)
        else:
            report = gardener.sync(Path(args.source) if args.source else None, path=args.path,
                                   curator=curator, dry_run=args.dry_run, jobs=jobs, executor=executor)
    finally:
        stop()
        if curator is not None:
            curator.close()
    return report


def cmd_adopt(args: argparse.Namespace) -> int:
    return _run_pipeline(args, "adopt")


def cmd_sync(args: argparse.Namespace) -> int:
    return _run_pipeline(args, "sync")


def cmd_rollup(args: argparse.Namespace) -> int:
    from monkeyllm_core import Vine
    from .rollup import rollup_forest
    forest = _forest(args)
    curator = _curator(args, forest)
    try:
        problems: list[str] = []
        with Vine(forest) as vine, vine.bulk():  # one checkpoint a second, not one per branch
            stats = rollup_forest(vine, curator=curator, only_ingest=not args.all, problems=problems)
    finally:
        if curator is not None:
            curator.close()
    if curator is not None:
        _print(f"curation model: {curator.model}")
    for line in problems:
        _print(f"warning: {line}")
    _print(f"rollup: {stats['rolled']} branch(es) rolled, {stats['fallbacks']} fallback(s), {stats['skipped']} skipped")
    if curator is not None:
        _print(f"curation: {curator.stats()!r}")
    return EXIT_OK


def cmd_validate(args: argparse.Namespace) -> int:
    from monkeyllm_core import Vine
    from monkeyllm_core.forest.validate import check_forest
    forest = _forest(args)
    vine = Vine(forest, writable=False)
    try:
        checked = check_forest(vine)  # the files, or HEAD while a writer is at work
    finally:
        vine.close()
    findings, count = checked.findings, checked.nodes
    if checked.note:
        _print(f"note: {checked.note}")
    for finding in findings:
        _print(finding.line())
    errors = sum(1 for f in findings if f.level == "error")
    warnings = len(findings) - errors
    _print(f"validate: {count} node(s), {errors} error(s), {warnings} warning(s)")
    return EXIT_FAILED if errors or (args.strict and warnings) else EXIT_OK


def cmd_reindex(args: argparse.Namespace) -> int:
    from monkeyllm_core import Vine
    with Vine(_forest(args)) as vine:
        count = vine.reindex()
    _print(f"reindex: {count} node(s) in the catalog")
    return EXIT_OK


def cmd_query(args: argparse.Namespace) -> int:
    import json
    from monkeyllm_core import Vine
    vine = Vine(_forest(args), writable=False)
    try:
        result = vine.query(args.id, args.sql)
    finally:
        vine.close()
    _print(json.dumps(result, ensure_ascii=False, indent=2))
    return EXIT_OK


def cmd_plugins(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path
    from monkeyllm_core import is_forest
    from .config import GardenerConfig
    from .host import PluginHost, format_plugins_report
    converters: dict[str, str] = {}
    forest = Path(args.forest or ".").resolve()
    if is_forest(forest):
        config = GardenerConfig.load(forest)
        converters = config.converters
    host = PluginHost(command_converters=converters)
    report = host.plugins_report()
    _print(json.dumps(report, indent=2, ensure_ascii=False) if args.json else format_plugins_report(report))
    return EXIT_OK


# -- parser --------------------------------------------------------------------------------
# Every command in the order `vine --help` lists it: its help line, and the module
# and function that add its arguments to its parser. argparse pays about a tenth
# of a millisecond for each argument and each parser, and building all of them
# (160 arguments, 28 parsers) was most of `vine --help`: so a run builds the
# parser of the one command it names, and imports only that command's module.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "init": ("create a forest", __name__, "init_arguments"),
    "adopt": ("adopt an export folder", __name__, "adopt_arguments"),
    "sync": ("sync an export folder", __name__, "sync_arguments"),
    "rollup": ("rewrite branch summaries bottom-up", __name__, "rollup_arguments"),
    "validate": ("check the forest's format", __name__, "validate_arguments"),
    "reindex": ("rebuild _derived/catalog.db from the files", __name__, "reindex_arguments"),
    "query": ("read-only SQL over a dataset", __name__, "query_arguments"),
    "plugins": ("list plugins, converters and load errors", __name__, "plugins_arguments"),
    "locate": ("ranked entry points for a question (title, aliases, tags, summary)",
               "monkeyllm_gardener.read_commands", "locate_arguments"),
    "look": ("the digest of one node: what it is, its edges, what a pick costs",
             "monkeyllm_gardener.read_commands", "look_arguments"),
    "move": ("neighbours along typed edges, or a branch's children (--rel children)",
             "monkeyllm_gardener.read_commands", "move_arguments"),
    "scan": ("a branch's children filtered by passport fields (catalog only)",
             "monkeyllm_gardener.read_commands", "scan_arguments"),
    "pick": ("a node's whole body, or one section of it", "monkeyllm_gardener.read_commands", "pick_arguments"),
    "sniff": ("literal search of bodies (case and accents ignored), with the matching lines",
              "monkeyllm_gardener.read_commands", "sniff_arguments"),
    "harvest": ("locate and sniff fused, each node with its evidence (no model)",
                "monkeyllm_gardener.read_commands", "harvest_arguments"),
    "snapshot": ("back a forest up as one file (a git bundle), or restore one",
                 "monkeyllm_gardener.snapshot_commands", "snapshot_arguments"),
    "serve": ("serve a forest (or a folder of forests) over MCP: stdio or streamable HTTP",
              "monkeyllm_gardener.serve_commands", "serve_arguments"),
    "keys": ("bearer keys for `vine serve` over HTTP (stored hashed)",
             "monkeyllm_gardener.keys_commands", "keys_arguments"),
    "ranger": ("evaporate heat, tend links, refresh Landmarks, report health",
               "monkeyllm_gardener.ranger_commands", "ranger_arguments"),
    "troop": ("several model navigators hunt one question; a judge writes the answer",
              "monkeyllm_gardener.troop_commands", "troop_arguments"),
    "canopy": ("the vector layer: build it, or see how stale it is",
               "monkeyllm_gardener.canopy_commands", "canopy_arguments"),
}
# how usage lines name the command, as argparse spells it from the choices
COMMAND_METAVAR = "{" + ",".join(COMMANDS) + "}"


def forest_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--forest", help="the forest directory (default: the current directory)")
    # also accepted after the subcommand; SUPPRESS keeps `vine --traceback adopt` working
    p.add_argument("--traceback", action="store_true", default=argparse.SUPPRESS,
                   help="re-raise errors with a traceback")


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The `vine` parser for ``argv``: the parser of the command it runs alone; every
    command listed, none built, when it names none (``vine --help``, a typo); every
    command built when ``argv`` is None (the whole CLI, as the help tests read it)."""
    parser = argparse.ArgumentParser(prog="vine", description="MonkeyLLM forests: init, adopt, sync, query.")
    parser.add_argument("--traceback", action="store_true", help="re-raise errors with a traceback")
    chosen = None if argv is None else command_named(argv)
    # with one parser registered, the usage lines still name them all (errors that
    # name the argument itself, a missing or unknown command, have every one)
    sub = parser.add_subparsers(dest="command", required=True, **({"metavar": COMMAND_METAVAR} if chosen else {}))
    for name, (help_text, module, adder) in COMMANDS.items():
        if chosen is not None and name != chosen:
            continue
        p = sub.add_parser(name, help=help_text)
        if argv is None or name == chosen:
            add_arguments = getattr(importlib.import_module(module), adder)
            add_arguments(p, forest_arg, _forest)
    return parser


def command_named(argv: Sequence[str]) -> str | None:
    """The command ``argv`` runs, when nothing before it could change what the
    parser prints: only ``--traceback`` (or an abbreviation argparse accepts) may
    come first; ``-h`` there prints the whole list, so it builds the whole list."""
    for token in argv:
        if token.startswith("--t") and "--traceback".startswith(token):
            continue
        return token if token in COMMANDS else None
    return None


def init_arguments(p: argparse.ArgumentParser, forest_arg: Callable[[argparse.ArgumentParser], None],
                   forest_of: Callable[[argparse.Namespace], Path]) -> None:
    forest_arg(p)
    p.add_argument("--title", required=True)
    p.add_argument("--summary")
    p.set_defaults(func=cmd_init)


def _pipeline_arguments(p: argparse.ArgumentParser, verb: str,
                        forest_arg: Callable[[argparse.ArgumentParser], None]) -> None:
    p.add_argument("source", nargs=None if verb == "adopt" else "?",
                   help="the export folder" + ("" if verb == "adopt" else " (default: every adopted source)"))
    forest_arg(p)
    if verb == "adopt":
        p.add_argument("--dest", help="branch to adopt under (default: the forest root)")
    else:
        p.add_argument("--path", help="only this file or folder, relative to the source")
    p.add_argument("--curate", action="store_true", help="write summaries with the Curator (needs MONKEYLLM_LLM_ENDPOINT)")
    p.add_argument("--dry-run", action="store_true", help="print the plan, write nothing")
    p.add_argument("--jobs", type=int, help="converter processes (default: CPU count); with "
                   "--executor dask, conversions running at once (default: the cluster's threads)")
    p.add_argument("--executor", choices=("process", "dask"), default="process",
                   help="where files are converted: local processes (default) or a Dask cluster")
    p.add_argument("--scheduler", metavar="ADDR",
                   help="the Dask scheduler's address, e.g. tcp://HOST:8786 (with --executor dask)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--verbose", action="store_true", help="list unchanged and skipped files too")
    p.set_defaults(func=cmd_adopt if verb == "adopt" else cmd_sync)


def adopt_arguments(p: argparse.ArgumentParser, forest_arg: Callable[[argparse.ArgumentParser], None],
                    forest_of: Callable[[argparse.Namespace], Path]) -> None:
    _pipeline_arguments(p, "adopt", forest_arg)


def sync_arguments(p: argparse.ArgumentParser, forest_arg: Callable[[argparse.ArgumentParser], None],
                   forest_of: Callable[[argparse.Namespace], Path]) -> None:
    _pipeline_arguments(p, "sync", forest_arg)


def rollup_arguments(p: argparse.ArgumentParser, forest_arg: Callable[[argparse.ArgumentParser], None],
                     forest_of: Callable[[argparse.Namespace], Path]) -> None:
    forest_arg(p)
    p.add_argument("--all", action="store_true", help="include branches not created by ingest")
    p.add_argument("--curate", action="store_true", help="write them with the Curator")
    p.set_defaults(func=cmd_rollup)


def validate_arguments(p: argparse.ArgumentParser, forest_arg: Callable[[argparse.ArgumentParser], None],
                       forest_of: Callable[[argparse.Namespace], Path]) -> None:
    forest_arg(p)
    p.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    p.set_defaults(func=cmd_validate)


def reindex_arguments(p: argparse.ArgumentParser, forest_arg: Callable[[argparse.ArgumentParser], None],
                      forest_of: Callable[[argparse.Namespace], Path]) -> None:
    forest_arg(p)
    p.set_defaults(func=cmd_reindex)


def query_arguments(p: argparse.ArgumentParser, forest_arg: Callable[[argparse.ArgumentParser], None],
                    forest_of: Callable[[argparse.Namespace], Path]) -> None:
    p.add_argument("id")
    p.add_argument("sql")
    forest_arg(p)
    p.set_defaults(func=cmd_query)


def plugins_arguments(p: argparse.ArgumentParser, forest_arg: Callable[[argparse.ArgumentParser], None],
                      forest_of: Callable[[argparse.Namespace], Path]) -> None:
    forest_arg(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_plugins)


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(argv).parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted: every node planted so far is committed; run `vine sync` to finish\n")
        return 130
    except Exception as exc:
        if args.traceback:
            raise
        return _expected_error(exc)


def _expected_error(exc: Exception) -> int:
    from monkeyllm_core import VineError
    from monkeyllm_core.store.history import GitError
    from .config import ConfigError
    from .executors import ExecutorError
    from .walk import WalkError
    if isinstance(exc, GitError):
        sys.stderr.write(f"error: {exc} (the forest is unchanged for the failed write; "
                         "check the forest's .git, then run the command again)\n")
        return EXIT_USAGE
    if isinstance(exc, VineError):
        sys.stderr.write(exc.one_line() + "\n")
        return EXIT_USAGE
    if isinstance(exc, (UsageError, ConfigError, WalkError, ExecutorError)):
        line = f"error: {exc.message}" + (f" ({exc.hint})" if exc.hint else "")
        sys.stderr.write(line + "\n")
        return EXIT_USAGE
    raise exc


if __name__ == "__main__":
    sys.exit(main())
