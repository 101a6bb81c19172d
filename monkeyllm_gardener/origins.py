"""Where a file came from, as the ``origin`` URI its node carries (``file:///...``,
percent-encoded: FOREST-FORMAT.md, Gardener provenance).

Its own module: a sync computes the origin of every walked file to match it with
the catalog, and must not import the node builder (``nodes``) to do it.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Callable


def file_uri(path: Path) -> str:
    return "file://" + quote_path(path.as_posix())


# what ``urllib.parse.quote`` leaves alone: its always-safe characters and "/"
_UNSAFE_IN_URI = re.compile(rb"[^A-Za-z0-9_.~/-]")


def quote_path(text: str) -> str:
    """``urllib.parse.quote(text)`` to the byte, in one regex pass: a sync quotes
    every walked path, and only the characters that need escaping pay here."""
    return _UNSAFE_IN_URI.sub(_percent_escape, text.encode("utf-8")).decode("ascii")


def _percent_escape(match: re.Match[bytes]) -> bytes:
    return b"%%%02X" % match[0][0]


def origins_under(source: Path) -> Callable[[str], str]:
    """``rel -> file_uri(source / rel)`` for the files of one source, without a
    ``Path`` per file (a walk's rels are plain: no empty or "." segment)."""
    prefix = file_uri(source)
    plain_source = prefix != "file:///"

    def origin(rel: str) -> str:
        if plain_source and rel and rel[0] != "/" and rel[-1] != "/" and "//" not in rel \
                and "/./" not in f"/{rel}/":
            return f"{prefix}/{quote_path(rel)}"
        return file_uri(source / rel)

    return origin
