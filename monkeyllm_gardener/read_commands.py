"""``vine locate | look | move | scan | pick``: the read calls on the command line.

A thin layer like the rest of the CLI: parse the arguments, open the forest
read-only (a read never takes the writer lock, so it runs beside ``vine sync``),
call the ``Vine`` method, print. ``--json`` prints the exact response, the same
compact JSON every transport sends (``read.contract.wire``), and an expected
error as its envelope on stdout (exit 2); without it the output is text for a
person and an error is one line on stderr with its hint (exit 2).

``MONKEYLLM_SESSION=<id>`` makes successive commands one hunt (``read.sessions``):
their traces share a file and a pick's session heat ranks the next locate.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from monkeyllm_core import VineError

if TYPE_CHECKING:  # imported when a command runs: `vine --help` builds the parser alone
    from monkeyllm_core import Vine

EXIT_OK, EXIT_USAGE = 0, 2


Adder = Callable[[argparse.ArgumentParser], None]
Forest = Callable[[argparse.Namespace], Path]


# each adds one read command's arguments to its parser (``cli.COMMANDS`` names it, with its help line)
def _read_command(p: argparse.ArgumentParser, forest_arg: Adder, forest_of: Forest,
                  call: Callable[[Vine, argparse.Namespace], dict[str, Any]],
                  show: Callable[[dict[str, Any]], str]) -> None:
    forest_arg(p)
    p.add_argument("--json", action="store_true", help="print the exact response (compact JSON)")
    p.set_defaults(func=lambda args: _run(args, forest_of, call, show))


def locate_arguments(p: argparse.ArgumentParser, forest_arg: Adder, forest_of: Forest) -> None:
    _read_command(p, forest_arg, forest_of,
                  lambda v, a: v.locate(a.query, k=a.k, scope=a.scope, type_filter=a.type), show_locate)
    p.add_argument("query")
    p.add_argument("--k", type=int, default=5, help="how many entry points (default 5)")
    p.add_argument("--scope", default="all", help="all | branches | bananas")
    p.add_argument("--type", action="append", help="only this node type (repeatable)")


def look_arguments(p: argparse.ArgumentParser, forest_arg: Adder, forest_of: Forest) -> None:
    _read_command(p, forest_arg, forest_of, lambda v, a: v.look(a.id, fields=_names(a.fields)), show_look)
    p.add_argument("id")
    p.add_argument("--fields", help="comma-separated fields, e.g. summary,stats")


def move_arguments(p: argparse.ArgumentParser, forest_arg: Adder, forest_of: Forest) -> None:
    _read_command(p, forest_arg, forest_of, lambda v, a: v.move(a.id, rel=a.rel, direction=a.direction), show_move)
    p.add_argument("id")
    p.add_argument("--rel", help="one relation, or 'children'")
    p.add_argument("--direction", default="out", help="out | in | both (default out)")


def scan_arguments(p: argparse.ArgumentParser, forest_arg: Adder, forest_of: Forest) -> None:
    _read_command(p, forest_arg, forest_of,
                  lambda v, a: v.scan(a.parent, filter=_filter(a.filter), fields=_names(a.fields),
                                      recursive=a.recursive, limit=a.limit), show_scan)
    p.add_argument("parent", help="a branch id (sales/_index) or its folder (sales)")
    p.add_argument("--filter", help='JSON, e.g. \'{"type": "dataset", "tags_any": ["sales"]}\'')
    p.add_argument("--fields", help="comma-separated fields (default type,title,summary)")
    p.add_argument("--recursive", action="store_true", help="the whole subtree, not only direct children")
    p.add_argument("--limit", type=int, default=50)


def pick_arguments(p: argparse.ArgumentParser, forest_arg: Adder, forest_of: Forest) -> None:
    _read_command(p, forest_arg, forest_of, lambda v, a: v.pick(a.id, section=a.section), show_pick)
    p.add_argument("id")
    p.add_argument("--section", help="a header of the body (any level, any case)")


def sniff_arguments(p: argparse.ArgumentParser, forest_arg: Adder, forest_of: Forest) -> None:
    _read_command(p, forest_arg, forest_of,
                  lambda v, a: v.sniff(a.terms, scope=a.scope, k=a.k, type_filter=a.type), show_sniff)
    p.add_argument("terms", nargs="+", help="1-8 literal strings of at least 2 characters")
    p.add_argument("--scope", help="a branch (its subtree) or one node id")
    p.add_argument("--k", type=int, default=5, help="how many nodes (default 5)")
    p.add_argument("--type", action="append", help="only this node type (repeatable)")


def harvest_arguments(p: argparse.ArgumentParser, forest_arg: Adder, forest_of: Forest) -> None:
    _read_command(p, forest_arg, forest_of, lambda v, a: v.harvest(a.query, terms=a.term, k=a.k), show_harvest)
    p.add_argument("query")
    p.add_argument("--term", action="append", help="a literal string to sniff for (repeatable; default: "
                                                   "the query's content words)")
    p.add_argument("--k", type=int, default=3, help="how many nodes (default 3)")


def _run(args: argparse.Namespace, forest_of: Callable[[argparse.Namespace], Path],
         call: Callable[[Vine, argparse.Namespace], dict[str, Any]], show: Callable[[dict[str, Any]], str]) -> int:
    from monkeyllm_core import Vine
    from monkeyllm_core.read.contract import wire
    try:
        with Vine(forest_of(args), writable=False) as vine:
            response = call(vine, args)
    except VineError as exc:
        if not args.json:
            raise  # the CLI's one-line error, exit 2
        _write(wire(exc.envelope()))
        return EXIT_USAGE
    _write(wire(response) if args.json else show(response))
    return EXIT_OK


def _write(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()


def _names(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [name.strip() for name in text.split(",") if name.strip()]


def _filter(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise VineError("E_SCHEMA", f"--filter is not JSON ({exc.msg} at character {exc.pos})",
                        """Quote it for the shell, e.g. --filter '{"type": "dataset"}'.""") from None


# -- text for a person ------------------------------------------------------------------
def _tail(response: dict[str, Any], more: str) -> list[str]:
    """What the response says about itself: the vectors it used or why not, the
    Gauntlet's order, a cut."""
    lines = []
    dense = response.get("dense")
    if isinstance(dense, dict):
        lines.append(f"(fused with the canopy's vectors, model {dense.get('model')}, {dense.get('stale', 0)} stale)"
                     if dense.get("used") else f"(vectors not used: {dense.get('reason')})")
    frontier = response.get("frontier")
    if isinstance(frontier, dict) and frontier.get("ranked"):
        lines.append(f"(ordered toward the hunt's goal: {frontier.get('toward')!r})")
    if response.get("truncated"):
        lines.append(f"(truncated: {response.get('hint') or more})")
    return lines


def show_locate(response: dict[str, Any]) -> str:
    lines = []
    for n, result in enumerate(response["results"], start=1):
        extra = f"  [{result['coverage']}]" if result.get("coverage") else ""
        lines.append(f"{n}. {result['id']}  ({result['kind']}, {result['type']})  "
                     f"score {result['score']:.4f}  heat {result['heat']:.2f}{extra}")
        lines.append(f"   {result['title']}: {result['summary']}")
    if not response["results"]:
        lines.append("no entry point matched")
    return "\n".join(lines + _tail(response, "more nodes matched: narrow the query"))


def show_look(response: dict[str, Any]) -> str:
    lines = [f"{response['id']}" + (f"  ({response['type']})" if "type" in response else "")]
    for key in ("title", "summary", "tags", "confidence", "updated", "coverage", "notes"):
        if key in response:
            value = response[key]
            lines.append(f"  {key}: {', '.join(value) if isinstance(value, list) else value}")
    for edge in response.get("edges_out", []):
        lines.append(f"  -> {edge['rel']} {edge['target']}: {edge['target_summary'] or '(no such node)'}")
    for edge in response.get("edges_in", []):
        lines.append(f"  <- {edge['rel']} {edge['source']}")
    if response.get("outline"):
        lines.append("  outline: " + " | ".join(response["outline"]))
    for child in response.get("children", []):
        lines.append(f"  child {child['id']}: {child['summary']}")
    for trail in response.get("cross_trails", []):
        lines.append(f"  cross trail -> {trail['target']}: {trail['text']}")
    manual = response.get("query_manual")
    if manual:
        for table, columns in {**manual.get("tables", {}), **manual.get("views", {})}.items():
            lines.append(f"  table {table}({', '.join(columns)})")
        for example in manual.get("example_queries", []):
            lines.append(f"  example: {example}")
    samples = response.get("sample_rows")
    if samples:
        lines.append("  sample: " + " | ".join(samples["columns"]))
        lines += ["          " + " | ".join(row) for row in samples["rows"]]
    if "stats" in response:
        stats = response["stats"]
        lines.append(f"  stats: {stats['body_tokens']} body tokens, degree {stats['degree']}, heat {stats['heat']:.2f}")
    return "\n".join(lines + _tail(response, "the digest was cut"))


def show_move(response: dict[str, Any]) -> str:
    lines = [f"{'->' if n['direction'] == 'out' else '<-'} {n['rel']} {n['id']}  ({n['type'] or 'no such node'}, "
             f"heat {n['heat']:.2f}): {n['summary'] or ''}" for n in response["neighbors"]]
    if not lines:
        lines.append("no neighbours")
    return "\n".join(lines + _tail(response, "more neighbours matched"))


def show_scan(response: dict[str, Any]) -> str:
    lines = []
    for node in response["nodes"]:
        rest = [f"{key}={', '.join(map(str, v)) if isinstance(v, list) else v}" for key, v in node.items() if key != "id"]
        lines.append(f"{node['id']}" + (f"  {'  '.join(rest)}" if rest else ""))
    if not lines:
        lines.append("no node matched")
    return "\n".join(lines + _tail(response, "more nodes matched: raise the limit or narrow the filter"))


def show_pick(response: dict[str, Any]) -> str:
    if "body" in response:
        return response["body"]
    lines = [f"{response['id']}: {response['title']} ({response['body_tokens']} tokens)", "outline:"]
    lines += [f"  {name}" for name in response.get("outline", [])]
    return "\n".join(lines + _tail(response, "the body is over the budget"))


def show_sniff(response: dict[str, Any]) -> str:
    lines = []
    for n, result in enumerate(response["results"], start=1):
        more = " (more lines matched)" if result.get("truncated_matches") else ""
        lines.append(f"{n}. {result['id']}  ({result['type']})  {result['match_count']} matching line(s){more}")
        for match in result["matches"]:
            where = f"{match['section']}, " if match.get("section") else ""
            lines.append(f"   [{where}line {match['line']}] {match['snippet']}")
    if not response["results"]:
        lines.append("no body holds these terms")
    lines.append(f"({response['scanned_nodes']} node(s) in scope)")
    return "\n".join(lines + _tail(response, "more nodes matched: narrow the scope or add a term"))


def show_harvest(response: dict[str, Any]) -> str:
    lines = []
    for n, result in enumerate(response["results"], start=1):
        lines.append(f"{n}. {result['id']}  score {result['score']:.4f}  found by {', '.join(result['found_by'])}")
        lines.append(f"   {result['title']}: {result['summary']}")
        for part in result.get("content", []):
            if "body" in part:
                head = f"## {part['section']}" if part.get("section") else "(whole body)"
                lines.append(f"   {head} ({part['body_tokens']} tokens)")
            else:
                lines.append(f"   outline: {', '.join(part.get('outline', []))}")
        if result.get("notes"):
            lines.append(f"   notes: {result['notes']}")
    if not response["results"]:
        lines.append("nothing matched")
    return "\n".join(lines + _tail(response, "more nodes matched: narrow the query"))
