"""The bearer keys of ``vine serve``: kept outside every forest, stored only as hashes.

``$MONKEYLLM_HOME/keys.json`` (default ``~/.config/monkeyllm/keys.json``) maps a
key's name to the SHA-256 of the key, the forest it is scoped to (None: every
forest the server offers) and whether it is read-only. A key is 32 random bytes
(``secrets.token_urlsafe``), so one unsalted SHA-256 is enough: there is no
password to guess, and a slow hash would only slow every request. The key
itself is shown once, by ``add``, and never written anywhere.

The file is replaced atomically (a temporary file in the same folder, then
``os.replace``) with mode 0600, under a ``flock`` so two ``vine keys add`` never
lose one another's key. A file that cannot be read as a key store is an error
naming it, never "no keys": with no keys a loopback server lets everyone in.

``KeyStore.current()`` is what a server asks on every request: the keys as of the
file's last change, re-read only when a ``stat`` says the file changed (a revoke
takes effect on the next request, without a restart).
"""
from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import hashlib
import hmac
import json
import os
import re
import secrets
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping

from monkeyllm_core import VineError

from .principal import Principal

KEY_PREFIX = "mk_"  # recognisable in a config file or a leak scanner's report
FILE_VERSION = 1
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
FOREST_NAME_RE = re.compile(r"^[^/\\\x00-\x1f.][^/\\\x00-\x1f]{0,254}$")  # a folder name, as the server lists it


def default_keys_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    home = env.get("MONKEYLLM_HOME")
    if home:
        return Path(home) / "keys.json"
    return Path(env.get("HOME") or Path.home()) / ".config" / "monkeyllm" / "keys.json"


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class KeyRecord:
    name: str
    sha256: str
    forest: str | None
    read_only: bool
    created: str

    def listing(self) -> dict[str, Any]:
        """What ``vine keys list`` shows: never the key, only a short prefix of its hash
        (enough to tell two keys apart, nothing that helps to guess one)."""
        return {"name": self.name, "forest": self.forest, "read_only": self.read_only, "created": self.created,
                "fingerprint": self.sha256[:12]}

    def principal(self) -> Principal:
        return Principal(self.name, self.forest, self.read_only)


class Keys:
    """The keys of one version of the file."""

    def __init__(self, records: Mapping[str, KeyRecord]) -> None:
        self.records = dict(records)

    def __bool__(self) -> bool:
        return bool(self.records)

    def resolve(self, bearer: str | None) -> Principal | None:
        """The principal a bearer key stands for, or None (no key, or not one of ours)."""
        if not bearer:
            return None
        digest = key_hash(bearer)
        found = None
        for record in self.records.values():  # every record compared: the time says nothing about which
            if hmac.compare_digest(record.sha256, digest):
                found = record
        return found.principal() if found is not None else None


class KeyStore:
    def __init__(self, path: Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_keys_path()
        self._cache: tuple[tuple[int, int, int] | None, Keys] | None = None
        self._cache_lock = threading.Lock()

    # -- reading ----------------------------------------------------------------------
    def current(self) -> Keys:
        """The keys now: re-read when the file's stat changed since the last look."""
        signature = self._signature()
        with self._cache_lock:
            if self._cache is not None and self._cache[0] == signature:
                return self._cache[1]
        keys = Keys(self._load()) if signature is not None else Keys({})
        with self._cache_lock:
            self._cache = (signature, keys)
        return keys

    def resolve(self, bearer: str | None) -> Principal | None:
        return self.current().resolve(bearer)

    def list(self) -> list[dict[str, Any]]:
        return [record.listing() for record in sorted(self._load().values(), key=lambda r: r.name)]

    def _signature(self) -> tuple[int, int, int] | None:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise self._unreadable(exc.strerror or str(exc)) from None
        # os.replace gives a new inode, so a rewrite within one mtime tick is still seen
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def _load(self) -> dict[str, KeyRecord]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError) as exc:
            raise self._unreadable(getattr(exc, "strerror", None) or str(exc)) from None
        try:
            document = json.loads(text)
        except ValueError as exc:
            raise self._unreadable(f"not JSON ({exc.msg} at line {exc.lineno})") from None
        return self._records(document)

    def _records(self, document: Any) -> dict[str, KeyRecord]:
        if not isinstance(document, dict) or document.get("version") != FILE_VERSION \
                or not isinstance(document.get("keys"), dict):
            raise self._unreadable(f'not a version {FILE_VERSION} key store ({{"version": 1, "keys": {{...}}}})')
        records = {}
        for name, entry in document["keys"].items():
            if not (isinstance(entry, dict) and isinstance(entry.get("sha256"), str)
                    and re.fullmatch(r"[0-9a-f]{64}", entry["sha256"])
                    and isinstance(entry.get("forest"), (str, type(None)))
                    and isinstance(entry.get("read_only"), bool)):
                raise self._unreadable(f"the entry for {name!r} is not a key record")
            records[name] = KeyRecord(name, entry["sha256"], entry["forest"], entry["read_only"],
                                      str(entry.get("created", "")))
        return records

    def _unreadable(self, problem: str) -> VineError:
        return VineError("E_KEYS", f"the key store {self.path} cannot be read: {problem}",
                         "Fix or delete that file; deleting it drops every key, so add them again with `vine keys add`.")

    # -- writing ----------------------------------------------------------------------
    def add(self, name: str, forest: str | None = None, read_only: bool = False) -> str:
        """A new key for ``name``, returned once: only its hash is stored."""
        check_key_name(name)
        if forest is not None:
            check_forest_name(forest)
        with self._locked():
            records = self._load()
            if name in records:
                raise VineError("E_EXISTS", f"a key named {name!r} exists already",
                                f"Pick another name, or `vine keys revoke {name}` first.")
            key = KEY_PREFIX + secrets.token_urlsafe(32)
            created = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
            records[name] = KeyRecord(name, key_hash(key), forest, read_only, created)
            self._write(records)
        return key

    def revoke(self, name: str) -> None:
        with self._locked():
            records = self._load()
            if name not in records:
                known = ", ".join(sorted(records)) or "none"
                raise VineError("E_NOT_FOUND", f"no key named {name!r}", f"Keys: {known} (`vine keys list`).")
            del records[name]
            self._write(records)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(self.path.with_name(self.path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _write(self, records: Mapping[str, KeyRecord]) -> None:
        document = {"version": FILE_VERSION, "keys": {
            r.name: {"sha256": r.sha256, "forest": r.forest, "read_only": r.read_only, "created": r.created}
            for r in records.values()}}
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp")  # mode 0600
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(document, fh, indent=2, sort_keys=True)
                fh.write("\n")
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def check_key_name(name: str) -> None:
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise VineError("E_SCHEMA", f"{name!r} is not a key name",
                        "Use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit.")


def check_forest_name(forest: str) -> None:
    if not FOREST_NAME_RE.match(forest):
        raise VineError("E_SCHEMA", f"--forest {forest!r} is not a forest name",
                        "Give the forest's name as `vine serve` lists it, its folder's name such as brain, "
                        "not a path.")
