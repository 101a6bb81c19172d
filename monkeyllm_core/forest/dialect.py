"""The forest's dialect: node types and edge rels, read from ``_meta/schema.md``.

The engine never trusts a hard-coded list: a forest may declare more types or
rels, and ours are only the defaults written by ``vine init``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from .layout import SCHEMA_PATH  # noqa: F401 - where the dialect lives; importable from here as before

DEFAULT_TYPES = (
    ("branch", "A folder's index: the map of what lives there.", "descend"),
    ("note", "A note written by a person or an agent.", "pick"),
    ("document", "A converted document (Word, PDF, ...).", "pick"),
    ("dataset", "A SQLite payload with its query manual.", "query"),
    ("entity", "A person, organisation, product or place.", "look"),
    ("concept", "An idea or definition.", "pick"),
    ("event", "Something that happened at a time.", "pick"),
    ("media", "An image or audio file with its textual proxy.", "look"),
)
DEFAULT_RELS = (
    ("part-of", "contains", "Logical membership, often across folders."),
    ("related-to", "related-to", "A lateral connection."),
    ("mentioned-in", "mentions", "The source is mentioned in the target."),
    ("author", "author-of", "The target wrote the source."),
    ("compared-with", "compared-with", "The two are compared."),
    ("derived-from", "origin-of", "The source was derived from the target."),
    ("same-as", "same-as", "The two name one thing."),
    ("discovered-shortcut", None, "A shortcut minted at the end of a long hunt."),
    ("succeeds", "precedes", "The source comes after the target."),
    ("supersedes", "superseded-by", "The source replaces the target."),
)

# How dataset payloads are filled, stated once for the whole forest so that each
# dataset's ``## Query manual`` carries only what is true of that dataset. Written by
# ``vine init``; the Gardener adds it to an older forest's dialect before its first
# dataset plant there (``CONVENTIONS_HEADER`` is how it is found).
CONVENTIONS_HEADER = "Dataset conventions"
DATASET_CONVENTIONS = """\
How the tables of `dataset` payloads were filled. A dataset's `## Query manual`
states only what differs from this for that dataset.

- NULL means no value: an empty or whitespace-only cell, a JSON `null` or missing key,
  the missing cells of a short row. `N/A`, `-`, `null`, `?` are text, never NULL.
- INTEGER holds canonical integer text only (`42`, `-7`: no `+`, spaces, leading zeros
  or `-0`) within 64 bits; `00501`, `+5`, ` 5`, `-0` and larger integers are TEXT.
- REAL holds finite decimals and exponents a double keeps (`1.5`, `1e3`); a column
  mixing integers and decimals is REAL. `1e400`, `0.10000000000000000001`, `nan`,
  `inf`, `1,000`, `1_000` are TEXT. The manual names each REAL column whose spelling
  changed when read (`1.50` stored as 1.5).
- TEXT is everything else, character for character; one text value makes the whole
  column TEXT. Booleans are 1/0 in INTEGER columns and `true`/`false` in TEXT ones;
  a nested JSON value is TEXT holding its JSON; spreadsheet dates are ISO 8601 text.
- Names are lowercase words of letters, digits and `_`: Latin accents fold (`Preço`
  is `preco`), other scripts stay (`名前`). A name that is not plain ASCII, or is an
  SQL keyword, is double-quoted, as the manual writes it: `SELECT "名前" FROM "社員"`.
"""

_TOKEN = re.compile(r"`([^`]+)`")


@dataclass(frozen=True)
class Dialect:
    types: frozenset[str]
    rels: dict[str, str | None] = field(hash=False)  # rel -> inverse (None: no inverse)

    def inverse(self, rel: str) -> str | None:
        if rel in self.rels:
            return self.rels[rel]
        for forward, inverse in self.rels.items():
            if inverse == rel:
                return forward
        return None

    def knows_rel(self, rel: str) -> bool:
        return rel in self.rels


def parse_dialect(text: str) -> Dialect:
    """Read the two tables whose first cells are backticked tokens."""
    types: list[str] = []
    rels: dict[str, str | None] = {}
    section = None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            heading = stripped.lstrip("#").strip().lower()
            section = "type" if "(type)" in heading else "rel" if "(rel)" in heading else None
            continue
        if section is None or not stripped.startswith("|"):
            continue
        cells = [c.strip() for c in stripped.strip("|").split("|")]
        first = _TOKEN.fullmatch(cells[0]) if cells else None
        if not first:
            continue
        if section == "type":
            types.append(first.group(1))
        else:
            inverse = _TOKEN.fullmatch(cells[1]) if len(cells) > 1 else None
            rels[first.group(1)] = inverse.group(1) if inverse else None
    return Dialect(types=frozenset(types), rels=rels)


def load_dialect(root: Path) -> Dialect:
    return parse_dialect((root / SCHEMA_PATH).read_text(encoding="utf-8"))


def default_schema_body() -> str:
    lines = [
        "# Dialect",
        "",
        "The node types and edge rels this forest accepts. Writes with a type or rel",
        "not declared here are refused with E_SCHEMA.",
        "",
        "## Node types (type)",
        "",
        "| type | description | harvest |",
        "| --- | --- | --- |",
    ]
    lines += [f"| `{name}` | {desc} | {verb} |" for name, desc, verb in DEFAULT_TYPES]
    lines += ["", "## Edge types (rel)", "", "| rel | inverse | meaning |", "| --- | --- | --- |"]
    lines += [f"| `{rel}` | {f'`{inv}`' if inv else '—'} | {desc} |" for rel, inv, desc in DEFAULT_RELS]
    lines += ["", f"## {CONVENTIONS_HEADER}", "", DATASET_CONVENTIONS.rstrip("\n")]
    return "\n".join(lines) + "\n"
