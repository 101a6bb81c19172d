"""The payload half of a snapshot: a plain tar with a manifest first.

Tar because it streams (a 5 GB payload costs one buffer, written and read in
one pass), keeps names and sizes in each member's header, and opens with any
tool (``tar tf``) when vine is not at hand; uncompressed because media payloads
are compressed already and SQLite pages are cheap to ship, while gzip would
cost more CPU than the copy. PAX headers hold any name and size.

Layout: ``manifest.json`` (format, version, the commit and the bundle's sha256
it belongs to, then ``path``, ``sha256``, ``size`` for each payload), then one
member ``payloads/<path>`` per manifest entry, in manifest order. The manifest
comes first so a reader knows what to expect before it writes a byte; its
hashes are the passports' payload_hash, and the writer checks the bytes it
streams against them, so what the manifest says is what the archive holds.

A reader trusts nothing in it: only regular members, only under ``payloads/``,
only paths the manifest names and each once, each of the size its manifest
entry states (``SidecarReader``); hashes are checked by whoever writes the bytes
out.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Iterator, Sequence

from ..errors import VineError

MANIFEST_NAME = "manifest.json"
PAYLOAD_FOLDER = "payloads/"
FORMAT = "monkeyllm-payloads"
VERSION = 1
MAX_MANIFEST_BYTES = 64 << 20  # about 400,000 entries: far past any forest, and a bound on what is read into memory
_HEX = frozenset("0123456789abcdef")


@dataclass(frozen=True)
class Entry:
    path: str    # relative to the forest root, posix
    sha256: str
    size: int


@dataclass(frozen=True)
class Manifest:
    commit: str
    bundle_sha256: str
    entries: list[Entry]

    def to_json(self) -> bytes:
        return json.dumps({"format": FORMAT, "version": VERSION, "commit": self.commit,
                           "bundle_sha256": self.bundle_sha256,
                           "payloads": [{"path": e.path, "sha256": e.sha256, "size": e.size} for e in self.entries]},
                          indent=1, ensure_ascii=False).encode("utf-8")


@dataclass(frozen=True)
class SidecarItem:
    entry: Entry   # what the manifest says; sha256 is the passport's payload_hash
    source: Path   # the payload file in the forest


class PayloadChanged(Exception):
    """A payload's bytes are not the ones its manifest entry (its passport) states."""

    def __init__(self, item: SidecarItem, found: str) -> None:
        super().__init__(item.entry.path)
        self.item, self.found = item, found  # found: what differs, for a person


class _HashingReader:
    """A file read for the archive, hashed on the way: the check costs no second read."""

    def __init__(self, handle: IO[bytes]) -> None:
        self.handle = handle
        self.digest = hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        data = self.handle.read(size)
        self.digest.update(data)
        return data


def write_sidecar(target: Path, manifest: Manifest, items: Sequence[SidecarItem]) -> None:
    """Write the archive to ``target`` (a temporary name: the caller renames it).
    Raises ``PayloadChanged`` when a payload's bytes or size are not its entry's."""
    with tarfile.open(target, "w", format=tarfile.PAX_FORMAT) as tar:
        data = manifest.to_json()
        tar.addfile(_member(MANIFEST_NAME, len(data), time.time()), io.BytesIO(data))
        for item in items:
            descriptor = os.open(item.source, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with open(descriptor, "rb") as handle:
                st = os.fstat(handle.fileno())
                if not stat.S_ISREG(st.st_mode) or st.st_size != item.entry.size:
                    raise PayloadChanged(item, f"{st.st_size} bytes now, {item.entry.size} a moment ago")
                reader = _HashingReader(handle)
                tar.addfile(_member(PAYLOAD_FOLDER + item.entry.path, item.entry.size, st.st_mtime), reader)
                if reader.digest.hexdigest() != item.entry.sha256:
                    raise PayloadChanged(item, f"sha256 {reader.digest.hexdigest()[:12]}..., "
                                               f"the passport says {item.entry.sha256[:12]}...")


def _member(name: str, size: int, mtime: float) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode, info.type = size, mtime, 0o644, tarfile.REGTYPE
    return info


class SidecarReader:
    """The manifest of a sidecar, then its payload members one by one."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._tar = tarfile.open(path, "r:")
        except (tarfile.TarError, OSError) as exc:
            raise self.corrupt(f"is not a payload sidecar ({exc})") from None
        try:
            self.manifest = self._read_manifest()
        except BaseException:
            self._tar.close()
            raise

    def corrupt(self, what: str) -> VineError:
        return VineError("E_CORRUPT", f"{self.path} {what}",
                         "It is truncated or altered: use another copy of the sidecar made with this bundle, "
                         "or restore without --payloads.")

    def close(self) -> None:
        self._tar.close()

    def __enter__(self) -> "SidecarReader":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _next(self) -> tarfile.TarInfo | None:
        try:
            return self._tar.next()
        except (tarfile.TarError, EOFError, OSError) as exc:
            raise self.corrupt(f"cannot be read past byte {self._tar.offset} ({exc})") from None

    def _read_manifest(self) -> Manifest:
        member = self._next()
        if member is None or member.name != MANIFEST_NAME or not member.isreg():
            raise self.corrupt(f"does not start with {MANIFEST_NAME}")
        if member.size > MAX_MANIFEST_BYTES:
            raise self.corrupt(f"has a {member.size}-byte manifest, over {MAX_MANIFEST_BYTES}")
        try:
            raw = json.loads(self._read(member))
            return _parse_manifest(raw)
        except (ValueError, KeyError, TypeError) as exc:
            raise self.corrupt(f"has a manifest that is not one ({exc})") from None

    def _read(self, member: tarfile.TarInfo) -> bytes:
        handle = self._tar.extractfile(member)
        assert handle is not None  # a regular member
        try:
            data = handle.read()
        except (tarfile.TarError, EOFError, OSError) as exc:
            raise self.corrupt(f"is cut short in {member.name} ({exc})") from None
        if len(data) != member.size:
            raise self.corrupt(f"is cut short in {member.name}")
        return data

    def payloads(self) -> Iterator[tuple[Entry, IO[bytes], float]]:
        """Each payload member once, as (its manifest entry, its bytes, its mtime);
        anything else in the archive is one line naming it. Ends by checking that
        every manifest entry came."""
        expected = {entry.path: entry for entry in self.manifest.entries}
        seen: set[str] = set()
        while (member := self._next()) is not None:
            if not member.isreg():
                raise self.corrupt(f"holds {member.name!r} as a {_kind(member)}; a sidecar holds regular files only")
            path = member.name[len(PAYLOAD_FOLDER):] if member.name.startswith(PAYLOAD_FOLDER) else None
            entry = expected.get(path) if path is not None else None
            if entry is None:
                raise self.corrupt(f"holds {member.name!r}, which its manifest does not name")
            if path in seen:
                raise self.corrupt(f"holds {member.name!r} twice")
            if member.size != entry.size:
                raise self.corrupt(f"holds {member.name!r} with {member.size} bytes; its manifest says {entry.size}")
            seen.add(path)
            handle = self._tar.extractfile(member)
            assert handle is not None
            yield entry, _Guarded(handle, self, member.name), member.mtime
        missing = [path for path in expected if path not in seen]
        if missing:
            raise self.corrupt(f"ends before {len(missing)} payload(s) of its manifest ({missing[0]} first)")


class _Guarded:
    """A member's bytes, where a read past the archive's end is the sidecar's one-line error."""

    def __init__(self, handle: IO[bytes], reader: SidecarReader, name: str) -> None:
        self.handle, self.reader, self.name = handle, reader, name

    def read(self, size: int = -1) -> bytes:
        try:
            return self.handle.read(size)
        except (tarfile.TarError, EOFError, OSError) as exc:
            raise self.reader.corrupt(f"is cut short in {self.name} ({exc})") from None


def _kind(member: tarfile.TarInfo) -> str:
    if member.issym():
        return f"symlink to {member.linkname!r}"
    if member.islnk():
        return f"hard link to {member.linkname!r}"
    return "folder" if member.isdir() else "special file"


def _parse_manifest(raw: Any) -> Manifest:
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise ValueError(f"format is not {FORMAT!r}")
    if raw.get("version") != VERSION:
        raise ValueError(f"version {raw.get('version')!r}, this vine reads {VERSION}")
    entries, paths = [], set()
    for item in raw["payloads"]:
        path, digest, size = item["path"], item["sha256"], item["size"]
        if not (isinstance(path, str) and is_safe_relative(path)):
            raise ValueError(f"path {path!r} is not a relative path inside the forest")
        if not (isinstance(digest, str) and len(digest) == 64 and set(digest) <= _HEX):
            raise ValueError(f"sha256 {digest!r} of {path} is not a sha256")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise ValueError(f"size {size!r} of {path} is not a size")
        if path in paths:
            raise ValueError(f"{path} is named twice")
        paths.add(path)
        entries.append(Entry(path, digest, size))
    return Manifest(str(raw["commit"]), str(raw["bundle_sha256"]), entries)


def is_safe_relative(path: str) -> bool:
    """A posix path that stays inside the folder it is relative to: not absolute,
    no ``..``, ``.`` or empty part, no NUL or backslash."""
    if not path or path.startswith("/") or "\0" in path or "\\" in path:
        return False
    return all(part not in ("", ".", "..") for part in path.split("/"))
