"""Text encoding detection for converters that read text files (CSV, JSON, markdown).

Rule, in order (the first that decodes the WHOLE file strictly wins):

1. UTF-8 with a byte order mark -> ``utf-8-sig`` (the BOM is stripped, so it never
   ends up in a first column's name or a title);
2. UTF-32 / UTF-16 with a byte order mark -> ``utf-32`` / ``utf-16``;
3. UTF-16 without a BOM, only when the first 4 KB have a NUL in most odd (LE) or
   even (BE) bytes and almost none in the others (ASCII-range text saved as UTF-16), with
   a warning;
4. plain UTF-8, validated over the whole file in chunks with an incremental decoder,
   so a single non-ASCII byte far past the first 4 KB is seen;
5. a legacy 8-bit fallback, with a warning: ``cp1252`` when every byte is defined in
   cp1252, else ``latin-1`` (which decodes any byte).

Characters are never replaced (no ``errors="replace"``): a fallback is stated in the
returned warning instead, so the run report says the text may look wrong and how
to fix it.
"""
from __future__ import annotations

import codecs
from pathlib import Path

_CHUNK_SIZE = 1 << 16  # 64 KiB: bounded memory whatever the file size

# (BOM, codec). UTF-32 LE starts with the UTF-16 LE BOM, so it is checked first.
_BYTE_ORDER_MARKS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def detect_encoding(path: Path | str) -> tuple[str, str | None]:
    """Return ``(codec, warning)`` for the text file at ``path``.

    ``codec`` is a Python codec name that decodes the whole file without error;
    ``warning`` is None for UTF-8/UTF-16/UTF-32, else one line saying which legacy
    encoding was assumed and what to do about it.
    """
    path = Path(path)
    with path.open("rb") as stream:
        head = stream.read(4)
    for bom, codec in _BYTE_ORDER_MARKS:
        if head.startswith(bom) and _decodes_whole_file(path, codec):
            return codec, None
    unmarked_utf16 = _unmarked_utf16(path)
    if unmarked_utf16 and _decodes_whole_file(path, unmarked_utf16):
        return unmarked_utf16, (
            f"decoded as {unmarked_utf16.upper()} (no byte order mark); "
            "re-save as UTF-8 if characters look wrong"
        )
    if _decodes_whole_file(path, "utf-8"):
        return "utf-8", None
    legacy = "cp1252" if _decodes_whole_file(path, "cp1252") else "latin-1"
    return legacy, (
        f"decoded as {legacy} (not valid UTF-8); re-save as UTF-8 if characters look wrong"
    )


def read_text(path: Path | str) -> tuple[str, str | None]:
    """Return ``(text, warning)``: the whole file decoded with ``detect_encoding``.

    For small files (markdown, JSON). Newlines are translated to ``\\n`` as by
    ``open()`` in text mode; the BOM, if any, is not part of the text.
    """
    codec, warning = detect_encoding(path)
    with Path(path).open("r", encoding=codec) as stream:
        return stream.read(), warning


def is_blank_file(path: Path | str, codec: str) -> bool:
    """True when the file holds nothing but whitespace once decoded (read in chunks)."""
    with Path(path).open("r", encoding=codec) as stream:
        while chunk := stream.read(_CHUNK_SIZE):
            if chunk.strip():
                return False
    return True


def _unmarked_utf16(path: Path) -> str | None:
    """``utf-16-le``/``-be`` when the head looks like ASCII-range UTF-16 without a BOM.

    Such text has a NUL in every other byte; a real UTF-8 or 8-bit file almost never
    does, so the test is: at least 4 code units and most odd (LE) or even (BE)
    bytes are NUL while almost none of the other half are.
    """
    with path.open("rb") as stream:
        head = stream.read(4096)
    head = head[: len(head) // 2 * 2]
    if len(head) < 8:
        return None
    even_nuls = head[0::2].count(0) / (len(head) // 2)
    odd_nuls = head[1::2].count(0) / (len(head) // 2)
    if odd_nuls > 0.7 and even_nuls < 0.1:
        return "utf-16-le"
    if even_nuls > 0.7 and odd_nuls < 0.1:
        return "utf-16-be"
    return None


def _decodes_whole_file(path: Path, codec: str) -> bool:
    decoder = codecs.getincrementaldecoder(codec)(errors="strict")
    try:
        with path.open("rb") as stream:
            while chunk := stream.read(_CHUNK_SIZE):
                decoder.decode(chunk)
        decoder.decode(b"", final=True)  # a truncated multi-byte sequence at EOF fails here
    except UnicodeDecodeError:
        return False
    return True
