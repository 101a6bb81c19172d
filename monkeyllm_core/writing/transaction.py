"""One write, all or nothing: its files, payloads and catalog rows, applied together
or undone together.

A write first collects what it changes (``put_node``; the branch upkeep reads its
own pending edits back through ``read``), journalling each payload before it is
created or moved aside. ``apply`` then journals the files, writes them, upserts the
catalog rows and makes the commit; on any failure every file gets its old text
back, a newborn payload is deleted, a replaced one is put back, the catalog rolls
back and the journal forgets the write. What a kill interrupts instead, the next
writable open puts back from the journal (``recovery``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import VineError, estimate_tokens
from ..forest.passport import render_node
from ..forest.rules import is_branch_id, node_path
from ..read.headings import outline
from .payloads import undo_payloads

if TYPE_CHECKING:
    from ..forest.catalog import Catalog
    from ..forest.dialect import Dialect
    from ..forest.upkeep import BranchUpkeep
    from ..store.history import Committer
    from .files import TextFiles
    from .journal import Journal


@dataclass
class WriteTransaction:
    """The files, payloads and catalog rows of one write, applied or undone together."""

    files_on_disk: TextFiles
    journal: Journal
    upkeep: BranchUpkeep
    files: dict[str, str] = field(default_factory=dict)  # rel path -> new text
    # passport, body tokens, outline, repeats (a branch's): the catalog rows to write
    nodes: list[tuple[dict[str, Any], int, list[str], set[str] | None]] = field(default_factory=list)
    new_payloads: list[Path] = field(default_factory=list)
    replaced_payloads: list[tuple[Path, Path]] = field(default_factory=list)  # (payload, backup)
    journal_at: int | None = None  # offset of this write's first journal line

    @property
    def root(self) -> Path:
        return self.files_on_disk.root

    def claim_payload(self, new: Path | None = None, replaced: tuple[Path, Path] | None = None) -> None:
        """Journal a payload before it is created or moved aside, so a kill -9
        mid-birth leaves no orphan .db (the next open deletes or restores it)."""
        entry: dict[str, list[Any]] = {"files": [], "new_payloads": [], "replaced_payloads": []}
        if new is not None:
            self.new_payloads.append(new)
            entry["new_payloads"].append(str(new.relative_to(self.root)))
        if replaced is not None:
            self.replaced_payloads.append(replaced)
            entry["replaced_payloads"].append([str(p.relative_to(self.root)) for p in replaced])
        at = self.journal.append(entry)
        if self.journal_at is None:
            self.journal_at = at

    def abandon(self) -> None:
        """Undo this write's payload work and forget its journal lines."""
        undo_payloads(self.new_payloads, self.replaced_payloads)
        if self.journal_at is not None:
            self.journal.truncate(self.journal_at)

    def read(self, rel: str) -> str | None:
        if rel in self.files:
            return self.files[rel]
        return self.files_on_disk.read(rel)

    def put_node(self, fm: dict[str, Any], body: str) -> None:
        rel = node_path(fm["id"])
        repeats = None
        if is_branch_id(fm["id"]):
            text, repeats, sections = self.upkeep.render(fm, body)
        else:
            text, sections = render_node(fm, body), outline(body)
        self.files[rel] = text
        self.nodes = [n for n in self.nodes if n[0]["id"] != fm["id"]]
        self.nodes.append((fm, estimate_tokens(body), sections, repeats))

    def settled_backups(self) -> list[Path]:
        """Once applied: the replaced payloads' backups, garbage at the next checkpoint."""
        return [backup for _, backup in self.replaced_payloads]

    def apply(self, message: str, *, committer: Committer, catalog: Catalog, dialect: Dialect) -> str:
        """Write, catalog and commit, or undo every part of it. Returns the commit."""
        binaries = [rel for rel in self.files if not rel.endswith(".md")]
        if binaries:
            # payloads live beside their passports, referenced by hash, never in git
            raise VineError("E_FRONTMATTER", f"refusing to commit non-markdown file(s): {', '.join(binaries)}",
                            "Only markdown nodes are committed; payloads stay out of git.")
        journal_at = self.journal.append({
            "files": sorted(self.files),
            "new_payloads": [str(p.relative_to(self.root)) for p in self.new_payloads],
            "replaced_payloads": [[str(p.relative_to(self.root)), str(b.relative_to(self.root))]
                                  for p, b in self.replaced_payloads],
        })
        originals: dict[str, str | None] = {}
        encoded = {rel: text.encode("utf-8") for rel, text in self.files.items()}
        try:
            for rel, text in self.files.items():
                originals[rel] = self.files_on_disk.read(rel)
                self.files_on_disk.write(rel, text, encoded[rel])
            catalog.begin()
            for fm, body_tokens, sections, repeats in self.nodes:
                catalog.upsert_node(fm, dialect, body_tokens=body_tokens, outline=sections)
                if repeats is not None:
                    catalog.set_repeats(fm["id"], repeats)
            sha = committer.commit(message, encoded)
            catalog.commit()
        except BaseException:
            catalog.rollback()
            self._restore(originals)
            undo_payloads(self.new_payloads, self.replaced_payloads)
            self.journal.truncate(journal_at if self.journal_at is None else self.journal_at)
            raise
        return sha

    def _restore(self, originals: dict[str, str | None]) -> None:
        """Every file this write touched gets its old text back (a new one goes), and
        no spare of it stays: the journal forgets this write, so a recovery after a
        kill would not know to remove one."""
        for rel, text in originals.items():
            if text is None:
                (self.root / rel).unlink(missing_ok=True)
                prune_empty_dirs((self.root / rel).parent, self.root)
            else:
                self.files_on_disk.write(rel, text)
            self.files_on_disk.drop_spare(rel)
            self.files_on_disk.forget(rel)


def prune_empty_dirs(folder: Path, root: Path) -> None:
    """Remove folders a rolled-back write created, up to (not including) the root."""
    while folder != root and root in folder.parents:
        try:
            folder.rmdir()
        except OSError:  # not empty (or gone): stop climbing
            return
        folder = folder.parent
