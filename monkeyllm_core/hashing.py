"""Payload hashing and copying, streamed so a 5 GB file costs constant memory."""
from __future__ import annotations

import hashlib
import os
import uuid
from pathlib import Path

CHUNK_BYTES = 1024 * 1024


def sha256_file(path: str | os.PathLike[str]) -> str:
    """Hex sha256 of a file's bytes, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def copy_file_with_hash(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> str:
    """Copy ``src`` to ``dst`` and return the sha256 of the bytes copied.

    The bytes go to a temporary file in ``dst``'s folder and are moved into place
    at the end, so ``dst`` either does not exist or holds the whole copy. ``dst``
    must not exist (FileExistsError): a payload is never overwritten. On any
    failure the temporary file is removed. No fsync: callers needing durability
    across power loss must add it; a half-written temp file is never visible as
    ``dst``.
    """
    source, target = Path(src), Path(dst)
    if os.path.lexists(target):
        raise FileExistsError(f"{target} already exists; a payload is never overwritten")
    temporary = target.with_name(f".{target.name}.{uuid.uuid4().hex}.tmp")
    digest = hashlib.sha256()
    try:
        # os.open with 0o666 honours the umask, so the copy gets ordinary file
        # permissions (mkstemp would leave it 0600, and a read-only source's mode
        # would make the payload unwritable for tend).
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
        with open(descriptor, "wb") as out, open(source, "rb") as handle:
            while chunk := handle.read(CHUNK_BYTES):
                digest.update(chunk)
                out.write(chunk)
        _move_into_place(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return digest.hexdigest()


def _move_into_place(temporary: Path, target: Path) -> None:
    """Rename ``temporary`` to ``target`` without ever replacing an existing file.

    A hard link fails atomically when ``target`` appeared meanwhile; where the
    filesystem has no hard links, fall back to a check and ``os.replace``.
    """
    try:
        os.link(temporary, target)
    except FileExistsError:
        raise FileExistsError(f"{target} already exists; a payload is never overwritten") from None
    except OSError:
        if os.path.lexists(target):
            raise FileExistsError(f"{target} already exists; a payload is never overwritten") from None
        os.replace(temporary, target)
        return
    temporary.unlink()
