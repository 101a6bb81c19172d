"""``vine snapshot create``: the forest's whole history in one file, and with
``with_payloads`` every payload a passport names in a sidecar beside it.

No writer lock is taken: the bundle is what git has committed, and the payloads
are checked against the passports of the very commit the bundle's HEAD holds
(``named.py``), byte for byte as they are streamed into the archive. A writer
that changes a payload meanwhile (a tend, a sync replacing a dataset) makes that
check fail, and the snapshot stops with one line saying so rather than pair a
passport with bytes it does not describe; run it again when the writer is done.

A payload that is missing or drifted stops a snapshot with payloads in the same
way, before anything is renamed into place: a backup that looks whole and is
not is the failure a backup must never have. Both files are written under
temporary names beside the target and renamed at the end, the sidecar first, so
a snapshot either exists whole or not at all.
"""
from __future__ import annotations

import os
import stat
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import VineError
from ..hashing import sha256_file
from ..store.committed import CommittedForest
from ..store.history import run_git
from ..writing.writer_probe import probe
from .absent import absent_payloads_message
from .bundle import write_bundle
from .named import NamedPayload, named_payloads
from .sidecar import Entry, Manifest, PayloadChanged, SidecarItem, write_sidecar

SIDECAR_SUFFIX = ".payloads.tar"


def sidecar_path(bundle: Path) -> Path:
    """Where a bundle's payloads travel: beside it, named after it."""
    return bundle.with_name(bundle.name + SIDECAR_SUFFIX)


@dataclass(frozen=True)
class SnapshotMade:
    bundle: Path
    commit: str
    branch: str
    refs: int
    commits: int
    bundle_bytes: int
    sidecar: Path | None = None
    payloads: int = 0
    payload_bytes: int = 0
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"bundle": str(self.bundle), "commit": self.commit, "branch": self.branch, "refs": self.refs,
                "commits": self.commits, "bundle_bytes": self.bundle_bytes,
                "sidecar": str(self.sidecar) if self.sidecar else None, "payloads": self.payloads,
                "payload_bytes": self.payload_bytes, "warnings": list(self.warnings)}


def create_snapshot(forest: Path, target: Path, *, with_payloads: bool = False) -> SnapshotMade:
    root = Path(forest).resolve()
    target = Path(target).resolve()
    sidecar = sidecar_path(target) if with_payloads else None
    for path in (target, sidecar):
        if path is not None and os.path.lexists(path):
            raise VineError("E_EXISTS", f"{path} already exists",
                            "A snapshot never replaces a file: choose another name, or remove the old one first.")
    if not target.parent.is_dir():
        raise VineError("E_NOT_FOUND", f"folder {target.parent} does not exist", "Create it, or name another file.")
    temporary = [target.with_name(f".{target.name}.{uuid.uuid4().hex[:12]}.vine-tmp")]
    try:
        heads = write_bundle(root, temporary[0])
        names = named_payloads(CommittedForest(root, heads.head))
        made = SnapshotMade(bundle=target, commit=heads.head, branch=heads.branch(), refs=len(heads.refs),
                            commits=int(run_git(root, "rev-list", "--all", "--count").strip()),
                            bundle_bytes=temporary[0].stat().st_size, warnings=list(names.problems))
        if sidecar is not None:
            temporary.append(sidecar.with_name(f".{sidecar.name}.{uuid.uuid4().hex[:12]}.vine-tmp"))
            items = _sidecar_items(root, names.by_path())
            manifest = Manifest(heads.head, sha256_file(temporary[0]), [item.entry for item in items])
            try:
                write_sidecar(temporary[1], manifest, items)
            except PayloadChanged as exc:
                raise _changed(root, exc) from None
            os.replace(temporary[1], sidecar)
            made = replace(made, sidecar=sidecar, payloads=len(items),
                           payload_bytes=sum(item.entry.size for item in items))
        os.replace(temporary[0], target)
    except BaseException:
        for path in temporary:
            path.unlink(missing_ok=True)
        if sidecar is not None and not target.exists():
            sidecar.unlink(missing_ok=True)  # renamed before the bundle failed to be: never one without the other
        raise
    return made


def _sidecar_items(root: Path, by_path: dict[str, list[NamedPayload]]) -> list[SidecarItem]:
    """Every payload file once, with the hash its passports state; one line for
    all the missing ones, one for passports that disagree on a file's hash."""
    items, missing = [], []
    for path, named in sorted(by_path.items()):
        source = root / path
        try:
            st = os.lstat(source)
        except FileNotFoundError:
            missing.append(named[0].node)
            continue
        if not stat.S_ISREG(st.st_mode):
            raise VineError("E_CONFLICT", f"{named[0].node}: payload {path} is not a regular file",
                            "A snapshot carries payload files, never links: put the file itself there.")
        hashes = {n.sha256 for n in named if n.sha256}
        if len(hashes) > 1:
            raise VineError("E_CONFLICT", f"{' and '.join(n.node for n in named)} name payload {path} "
                            "with different payload_hash values", "Run `vine validate` and repair the passports.")
        # a passport without payload_hash states no bytes: the archive records the ones it finds
        digest = hashes.pop() if hashes else sha256_file(source)
        items.append(SidecarItem(Entry(path, digest, st.st_size), source))
    if missing:
        raise VineError("E_NOT_FOUND", f"cannot carry the payloads: {absent_payloads_message(missing)}",
                        "Or snapshot the history alone, without --with-payloads.")
    return items


def _changed(root: Path, exc: PayloadChanged) -> VineError:
    writer = probe(root)
    path = exc.item.entry.path
    if writer.active:
        return VineError("E_CONFLICT", f"payload {path} changed while the snapshot read it "
                         f"(a writer is active: {writer.writer})",
                         "Run vine snapshot create again once the writer is done.")
    return VineError("E_CONFLICT", f"payload {path} does not match the payload_hash of its passport ({exc.found})",
                     "It changed outside tend: `vine sync` brings it back from its source, "
                     "or snapshot without --with-payloads.")
