"""``vine snapshot restore``: a snapshot back into a new folder, all or nothing.

DEST is claimed first (an empty folder made with ``mkdir``, so two restores
cannot both take it and an existing one is refused), and the forest is built in
a hidden folder beside it: every ref fetched from the bundle and the branch
checked out (``bundle.py``), the payloads put in place from the sidecar and each
checked against the payload_hash of the passport that names it, the catalog
built, ``validate`` run. Only then does the built folder take DEST's place, in
one rename. Any failure removes both folders and is one line naming the file
and what to do.

The sidecar is the least trusted input: it may only fill in the payload files
the restored passports name (which came from git, checked object by object), a
path is never absolute nor has ``..``, and each is written with ``O_EXCL`` and
``O_NOFOLLOW`` under folders made here, so neither a link in the archive nor a
link in the restored tree can send a byte outside the forest.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import stat
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from ..errors import VineError
from ..forest.validate import validate_forest
from ..hashing import CHUNK_BYTES, sha256_file
from ..store.committed import CommittedForest
from ..store.repo import init_repo
from ..vine import Vine, is_forest
from .bundle import clone_bundle
from .named import PayloadNames, named_payloads
from .sidecar import SidecarReader


@dataclass(frozen=True)
class SnapshotRestored:
    forest: Path
    commit: str
    branch: str
    refs: int
    nodes: int
    payloads: int                                   # put in place and verified
    absent: list[str] = field(default_factory=list)  # nodes whose payload is not here (no sidecar given)
    warnings: list[str] = field(default_factory=list)  # validate's warnings, as its lines

    def to_dict(self) -> dict:
        return {"forest": str(self.forest), "commit": self.commit, "branch": self.branch, "refs": self.refs,
                "nodes": self.nodes, "payloads": self.payloads, "absent": list(self.absent),
                "warnings": list(self.warnings)}


def restore_snapshot(bundle: Path, dest: Path, payloads: Path | None = None) -> SnapshotRestored:
    bundle = Path(bundle).resolve()
    dest = Path(dest).absolute()
    if not bundle.is_file():
        raise VineError("E_NOT_FOUND", f"snapshot {bundle} does not exist",
                        "Name the .bundle vine snapshot create wrote.")
    if payloads is not None and not Path(payloads).is_file():
        raise VineError("E_NOT_FOUND", f"sidecar {payloads} does not exist",
                        "Name the .payloads.tar written beside the bundle, or restore without --payloads.")
    if not dest.parent.is_dir():
        raise VineError("E_NOT_FOUND", f"folder {dest.parent} does not exist", "Create it first, or restore elsewhere.")
    try:
        dest.mkdir()
    except FileExistsError:
        raise VineError("E_EXISTS", f"{dest} already exists",
                        "A restore never writes into an existing folder: name a new one.") from None
    work = dest.with_name(f".{dest.name}.vine-restore-{uuid.uuid4().hex[:12]}")
    try:
        work.mkdir()
        restored = _build(bundle, work, dest, Path(payloads).resolve() if payloads is not None else None)
        os.replace(work, dest)  # the empty claim gives way to the whole forest in one rename
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        try:
            dest.rmdir()
        except OSError:
            pass
        raise
    return restored


def _build(bundle: Path, work: Path, dest: Path, sidecar: Path | None) -> SnapshotRestored:
    init_repo(work)
    heads = clone_bundle(bundle, work)
    if not is_forest(work):
        raise VineError("E_NOT_A_FOREST", f"{bundle} holds no forest (its HEAD has no _meta/schema.md)",
                        "Restore a bundle vine snapshot create wrote, or clone it with git.")
    names = named_payloads(CommittedForest(work))
    placed = _put_payloads(work, bundle, sidecar, names) if sidecar is not None else 0
    absent = sorted({named.node for named in names.payloads if not (work / named.path).is_file()})
    vine = Vine(work, writable=False)  # builds the derived layer: the catalog
    try:
        findings = validate_forest(vine)
        nodes = len(vine.node_files())
    finally:
        vine.close()
    errors = [finding for finding in findings if finding.level == "error"]
    if errors:
        raise VineError(errors[0].code, f"the forest in {bundle} does not validate ({len(errors)} error(s); "
                        f"first: {errors[0].line()})",
                        "Nothing was restored: inspect it with `git clone FILE DIR` and `vine validate --forest DIR`.")
    return SnapshotRestored(forest=dest, commit=heads.head, branch=heads.branch(), refs=len(heads.refs), nodes=nodes,
                            payloads=placed, absent=absent,
                            warnings=[finding.line() for finding in findings if finding.level == "warning"])


def _put_payloads(work: Path, bundle: Path, sidecar: Path, names: PayloadNames) -> int:
    """Write every payload the passports name from the sidecar, each verified."""
    expected = names.by_path()
    with SidecarReader(sidecar) as reader:
        manifest = reader.manifest
        if manifest.bundle_sha256 != sha256_file(bundle):
            raise VineError("E_CORRUPT", f"{sidecar} was not made with {bundle} (or one of them was altered)",
                            "Pass the .payloads.tar written beside this bundle, or restore without --payloads.")
        listed = {entry.path: entry for entry in manifest.entries}
        for path, named in expected.items():
            entry = listed.get(path)
            if entry is None:
                raise reader.corrupt(f"does not carry payload {path} of {named[0].node}")
            for one in named:
                if one.sha256 and one.sha256 != entry.sha256:
                    raise reader.corrupt(f"lists {path} with another hash than the payload_hash of {one.node}")
        unnamed = sorted(listed.keys() - expected.keys())
        if unnamed:
            raise reader.corrupt(f"carries {unnamed[0]}, which no passport names")
        for entry, stream, mtime in reader.payloads():
            digest = _write_inside(work, entry.path, stream, mtime)
            if digest != entry.sha256:
                raise reader.corrupt(f"holds {entry.path} altered: its bytes do not match the payload_hash "
                                     f"of {expected[entry.path][0].node}")
    return len(expected)


def _write_inside(root: Path, rel: str, stream: IO[bytes], mtime: float) -> str:
    """Write ``stream`` to ``root/rel`` as a new file, never through a link; its sha256."""
    *folders, name = rel.split("/")
    folder = root
    for part in folders:
        folder = folder / part
        try:
            folder.mkdir()
        except FileExistsError:
            if not stat.S_ISDIR(os.lstat(folder).st_mode):
                raise VineError("E_CORRUPT", f"payload {rel} would be written through "
                                f"{folder.relative_to(root).as_posix()}, which is not a folder in the snapshot",
                                "The snapshot's history holds a link where payloads go: restore it with git clone "
                                "and look at it.") from None
    target = folder / name
    try:
        descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666)
    except FileExistsError:
        raise VineError("E_CORRUPT", f"payload {rel} is already taken by a file of the snapshot's history",
                        "Payloads never enter git: restore it with git clone and look at it.") from None
    digest = hashlib.sha256()
    with open(descriptor, "wb") as out:
        while chunk := stream.read(CHUNK_BYTES):
            digest.update(chunk)
            out.write(chunk)
    os.utime(target, (mtime, mtime))
    return digest.hexdigest()
