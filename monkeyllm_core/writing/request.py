"""What a caller asks ``Vine.plant`` and ``Vine.replace`` to write: one request type.

A passport holds passport fields and nothing else. What the engine is told to do
with files travels beside it: a ``DatasetSpec`` (a dataset born from a declarative
schema) or a ``PayloadSpec`` (a file installed as the payload, with what the caller
already knows about it). So no key of a passport can make the engine copy a file,
a hook that edits a passport can only edit passport fields, and nobody pops
instructions back out of a dict.

``NodeWrite.from_wire`` reads the node dict of primitives.md ("plant"): ``body``,
``parent``, ``schema`` and ``rows`` are taken out, every other key (unknown ones
included, such as the Gardener's ``source_path``) is a passport field.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..errors import VineError
from ..forest.rules import check_new_id, parent_of

# Keys of the node dict that are not passport fields: the wire's own (parsed by
# from_wire) and the engine instructions that only a request spec carries.
WIRE_KEYS = ("body", "parent", "schema", "rows")
ENGINE_KEYS = ("payload_source", "payload_move", "row_counts", "manual_notes")


@dataclass(frozen=True, kw_only=True)
class DatasetSpec:
    """A dataset the engine births (plant) or rebuilds (replace) from a declarative
    schema, loading ``rows`` (table -> rows) if given."""

    schema: Mapping[str, Any]
    rows: Mapping[str, Iterable[Any]] | None = None
    manual_notes: tuple[str, ...] = ()  # sentences appended to the generated ## Query manual

    def __post_init__(self) -> None:
        object.__setattr__(self, "manual_notes", tuple(self.manual_notes))


@dataclass(frozen=True, kw_only=True)
class PayloadSpec:
    """A file the engine installs as the node's payload (named by the passport's
    ``payload``); a SQLite payload gets the generated map in the body."""

    source: Path
    move: bool = False  # rename instead of copy: a file the caller made on the forest's filesystem
    row_counts: Mapping[str, int] | None = None  # counted by the caller already; None: the engine counts
    manual_notes: tuple[str, ...] = ()  # sentences appended to the generated ## Query manual
    # what the caller worked out from this very file already (the Gardener's workers do,
    # so the writer does not): its SHA-256, taken only when the file is moved, not
    # copied; a SQLite payload's (## Query manual, ## Sample rows) as ``render_map``
    # makes them from it, ``manual_notes`` and ``row_counts``. None: the engine does it.
    sha256: str | None = None
    sample_map: tuple[str, str] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "source", Path(self.source))
        object.__setattr__(self, "manual_notes", tuple(self.manual_notes))


@dataclass(frozen=True, kw_only=True)
class NodeWrite:
    """One node to plant, or the changes of a replace.

    ``passport``: the frontmatter fields (for a replace, the keys to set; None
    removes one). ``body``: None plants an empty body, or keeps the body on a
    replace. At most one of ``dataset`` and ``payload``.
    """

    passport: Mapping[str, Any]
    body: str | None = None
    dataset: DatasetSpec | None = None
    payload: PayloadSpec | None = None

    def __post_init__(self) -> None:
        if self.dataset is not None and self.payload is not None:
            raise ValueError("a NodeWrite carries a dataset or a payload, not both")
        passport = dict(self.passport)  # the caller's dict may change later; this request does not
        for key in (*WIRE_KEYS, *ENGINE_KEYS):
            if key in passport:
                raise VineError("E_FRONTMATTER", f"{passport.get('id', '?')}: {key!r} is not a passport field",
                                _HINTS.get(key, "Pass it as NodeWrite(body=...), not in the passport."))
        object.__setattr__(self, "passport", passport)

    @classmethod
    def from_wire(cls, node: Mapping[str, Any]) -> "NodeWrite":
        """The request for primitives.md's node dict. ``parent``, when given, must be
        the one the id implies (the parent rule)."""
        fields = dict(node)
        body = str(fields.pop("body", "") or "")
        parent = fields.pop("parent", None)
        schema = fields.pop("schema", None)
        rows = fields.pop("rows", None)  # rows without a schema have nowhere to go
        if parent is not None:
            node_id = fields.get("id")
            check_new_id(node_id)
            expected = parent_of(node_id)
            if parent != expected:
                raise VineError("E_FRONTMATTER", f"{node_id}: parent {parent!r} breaks the parent rule",
                                f"{node_id} lives under {expected}.")
        dataset = DatasetSpec(schema=schema, rows=rows) if schema is not None else None
        return cls(passport=fields, body=body, dataset=dataset)


_PAYLOAD_HINT = "Engine instructions travel beside the passport: NodeWrite(payload=PayloadSpec(...))."
_HINTS = {
    "payload_source": _PAYLOAD_HINT,
    "payload_move": _PAYLOAD_HINT,
    "row_counts": _PAYLOAD_HINT,
    "manual_notes": "Pass them as PayloadSpec(manual_notes=...) or DatasetSpec(manual_notes=...).",
    "schema": "Pass a dataset as NodeWrite(dataset=DatasetSpec(schema=..., rows=...)).",
    "rows": "Pass a dataset as NodeWrite(dataset=DatasetSpec(schema=..., rows=...)).",
    "parent": "The parent follows from the id; a passport does not name it.",
}
