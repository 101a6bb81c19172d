"""The run report: every walked file ends in exactly one list.

One exception, as ingestion.md asks: a converter that failed before a fallback
converted the file is also recorded in ``errors``, naming who failed on what.

Printed in the seed's format (``planted (N):`` then two-space indented lines), or
as JSON with ``--json``. Empty lists are not printed; ``unchanged`` prints its
count only, since a no-change sync of thousands of files would otherwise drown
the lines that matter.
"""
from __future__ import annotations

import json
from typing import Any

LISTS = ("planted", "updated", "unchanged", "stale", "unsupported", "errors")


class Report:
    # a plain class, not a dataclass: a sync that finds nothing to do imports no dataclasses
    def __init__(self, *, dry_run: bool = False, warnings: list[str] | None = None) -> None:
        self.planted: list[str] = []  # node ids
        self.updated: list[str] = []
        self.unchanged: list[str] = []
        self.stale: list[str] = []
        self.unsupported: list[str] = []  # "rel: reason"
        self.errors: list[str] = []  # "rel: reason"
        self.branches: list[str] = []
        self.warnings: list[str] = [] if warnings is None else warnings
        self.skipped: list[str] = []
        self.curation_model: str | None = None
        self.curation: dict[str, int] | None = None
        self.rollup: dict[str, int] | None = None
        self.dry_run = dry_run
        self.plan: list[str] = []
        # ``errors`` also names each converter that failed before another one converted
        # the file (ingestion.md); the file is in ``planted``/``updated``, so these lines
        # alone do not fail the run
        self.recovered = 0

    @property
    def failed(self) -> bool:
        return len(self.errors) > self.recovered

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {name: getattr(self, name) for name in LISTS}
        out["branches"] = self.branches
        out["warnings"] = self.warnings
        out["skipped"] = self.skipped
        if self.curation_model is not None:
            out["curation_model"] = self.curation_model
        if self.curation is not None:
            out["curation"] = self.curation
        if self.rollup is not None:
            out["rollup"] = self.rollup
        if self.dry_run:
            out["dry_run"] = True
            out["plan"] = self.plan
        return out

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), indent=2, ensure_ascii=False)

    def to_text(self, *, verbose: bool = False) -> str:
        lines: list[str] = []
        if self.curation_model is not None:
            lines.append(f"curation model: {self.curation_model}")
        if self.dry_run:
            lines.append(f"dry run: nothing written ({len(self.plan)} planned change(s))")
            lines += [f"  {p}" for p in self.plan]
        for name in ("planted", "updated"):
            _section(lines, name, getattr(self, name))
        if self.unchanged:
            if verbose:
                _section(lines, "unchanged", self.unchanged)
            else:
                lines.append(f"unchanged ({len(self.unchanged)})")
        _section(lines, "branches", self.branches)
        for name in ("stale", "unsupported", "errors", "warnings"):
            _section(lines, name, getattr(self, name))
        if verbose:
            _section(lines, "skipped", self.skipped)
        if self.rollup is not None:
            r = self.rollup
            lines.append(f"rollup: {r['rolled']} branch(es) rolled, {r['fallbacks']} fallback(s), {r['skipped']} skipped")
        if self.curation is not None:
            lines.append(f"curation: {self.curation!r}")
        if not lines:
            lines.append("nothing to do")
        return "\n".join(lines)


def _section(lines: list[str], name: str, items: list[str]) -> None:
    if items:
        lines.append(f"{name} ({len(items)}):")
        lines.extend(f"  {item}" for item in items)
