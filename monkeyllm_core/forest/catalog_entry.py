"""What the catalog keeps of one node file: the one reading of a file for its rows.

``entry_of(node_id, text)`` parses a node's text into what ``Catalog.upsert_node``
and ``set_repeats`` take: the passport, the body's token estimate, its outline and,
for a branch, the ids its index names outside its listings. None when the text is
no readable node for that id (validate reports it; the catalog holds only readable
nodes). It is a pure function of the text, so a rebuild can run it in other
processes (``parallel_read``) and get the rows a serial one would.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import VineError, estimate_tokens
from ..read.headings import outline  # the read room's heading rule: what look and scan show
from . import branches as br
from .passport import parse_node
from .rules import check_id, is_branch_id, node_path


@dataclass(frozen=True)
class CatalogEntry:
    node_id: str
    frontmatter: dict[str, Any]
    body_tokens: int
    outline: list[str]
    repeats: frozenset[str] | None  # a branch's cross trails and landmarks; None for a banana


def entry_of(node_id: str, text: str) -> CatalogEntry | None:
    try:
        node = parse_node(text, where=node_path(node_id))
    except VineError:
        return None
    if node.frontmatter.get("id") != node_id:
        return None
    repeats = frozenset(br.repeated_ids(br.survey(node.body))) if is_branch_id(node_id) else None
    return CatalogEntry(node_id, node.frontmatter, estimate_tokens(node.body), outline(node.body), repeats)


def read_entry(root: str | Path, node_id: str) -> CatalogEntry | None:
    """The entry of a node's file as it is on disk (None: no file, not UTF-8, not a node).
    Read in text mode, as ``TextFiles.read`` reads it (universal newlines)."""
    try:
        check_id(node_id)
        with open(os.path.join(root, node_path(node_id)), encoding="utf-8") as handle:
            text = handle.read()
    except (VineError, OSError, UnicodeDecodeError):
        return None
    return entry_of(node_id, text)
