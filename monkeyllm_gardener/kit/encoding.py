"""Text encoding detection for converters that read text files (CSV, JSON, markdown,
or any text format a plugin reads).

``detect_encoding`` is the one decision every text converter shares, built-in or
not: the same file decodes the same way whichever converter reads it. Rule, in order
(every codec chosen must decode the WHOLE file strictly, or the next step is tried):

1. A byte order mark: UTF-8 (``utf-8-sig``, the BOM is stripped so it never ends up in
   a first column's name or a title), UTF-32, UTF-16. No warning.
2. UTF-16 without a BOM, when one half of the bytes of the first 4 KB is mostly NUL
   and the other half almost never (the ASCII characters of UTF-16 text: commas,
   digits, newlines, Latin letters), with a warning. Detectors are not asked about
   UTF-16: CJK text in Big5 or GB18030 also reads as plausible UTF-16.
3. Plain UTF-8, validated over the whole file in chunks with an incremental decoder,
   so a single non-ASCII byte far past the first 4 KB is seen. No warning.
4. Not UTF-8 -> ``ConversionError`` when the bytes are damaged UTF-8: the file ends in
   the middle of a UTF-8 character (truncated), or most of its non-ASCII bytes are
   valid UTF-8 sequences (a UTF-8 file with a few stray bytes, or UTF-8 and another
   encoding mixed). Read in any legacy encoding, such a file would be mojibake.
5. A legacy encoding, asked of charset-normalizer (a maintained detector) on a
   bounded sample: up to 128 KB of the lines holding non-ASCII bytes, from anywhere
   in the file. Two tie-breaks where detectors are weak, on short samples: they
   cannot tell the Western single-byte encodings apart (``Café`` reads as cp1250,
   johab or cp775 with no mess at all; ``“curly” – €5`` reads as cp437), so ``cp1252``
   goes first when its reading puts none of ``£ ¥ ¯ ³ ¹`` against a letter (the
   tell-tale of Polish text read as cp1252: ``£ódŸ``, ``by³``) and either is as clean as the
   detector's best (charset-normalizer's own mess measure) or the best is itself a
   Latin-script reading; and CJK readings that text in that language would not give
   are dropped (Shift-JIS read as rare cp949 syllables, GB18030 read as Hanja-heavy
   Korean, KOI8-R read as half-width katakana: ``_implausible_reading``). The first candidate that
   decodes the whole file wins, and a warning names it. Latin-1 text reads
   identically as cp1252 (except the C1 control bytes 0x80-0x9F, which are not text).
6. Nothing decodes with confidence -> ``ConversionError`` naming the file and the fix
   (re-save it as UTF-8). Characters are never replaced (no ``errors="replace"``).
"""
from __future__ import annotations

import codecs
import re
import unicodedata
from pathlib import Path
from typing import Any

from monkeyllm_gardener.conversion import ConversionError

__all__ = ["detect_encoding", "is_blank_file", "read_text"]

_CHUNK_SIZE = 1 << 16  # 64 KiB: bounded memory whatever the file size
_UTF16_SNIFF_BYTES = 4096  # the head looked at for UTF-16 without a byte order mark
_SAMPLE_BYTES = 1 << 17  # the detector sees at most 128 KiB of the lines holding non-ASCII
_PREFERRED_LEGACY = "cp1252"  # the most common legacy encoding of exported text
_DETECTOR_THRESHOLD = 0.2  # charset-normalizer's default: the most mess a reading may have
_KOREAN_CODECS = frozenset({"cp949", "uhc", "euc_kr", "johab"})
_JAPANESE_CODECS = frozenset({"cp932", "shift_jis", "shift_jis_2004", "shift_jisx0213"})
# cp1252's reading of the bytes cp1250 uses for Ł Ą Ż ł ą: signs no word holds
_CENTRAL_EUROPEAN_TELLS = frozenset("£¥¯³¹")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")

# (BOM, codec). UTF-32 LE starts with the UTF-16 LE BOM, so it is checked first.
_BYTE_ORDER_MARKS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# A complete UTF-8 multi-byte sequence (two to four bytes).
_UTF8_SEQUENCE = re.compile(
    rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}"
)
# UTF-16/32 readings are decided by step 2 only; the rest would be guesses on CJK bytes.
_NOT_ASKED = ["utf_16", "utf_16_le", "utf_16_be", "utf_32", "utf_32_le", "utf_32_be", "utf_7"]


def detect_encoding(path: Path | str) -> tuple[str, str | None]:
    """Return ``(codec, warning)`` for the text file at ``path``.

    ``codec`` is a Python codec name that decodes the whole file without error;
    ``warning`` is None for UTF-8 and BOM-marked UTF-16/32, else one line naming the
    file's encoding and what to do about it. Raises ``ConversionError`` when the file
    cannot be decoded with confidence (module docstring, steps 4 and 6).
    """
    path = Path(path)
    with path.open("rb") as stream:
        head = stream.read(4)
    for bom, codec in _BYTE_ORDER_MARKS:
        if head.startswith(bom):
            if _decodes_whole_file(path, codec):
                return codec, None
            if codec != "utf-8-sig":  # FF FE / FE FF are no text in any other encoding
                raise ConversionError(
                    f"undecodable text: {path.name} starts with a {codec.upper()} byte order mark "
                    f"but is not valid {codec.upper()} (truncated?); restore it or re-save it as UTF-8"
                )
    unmarked_utf16 = _unmarked_utf16(path)
    if unmarked_utf16 and _decodes_whole_file(path, unmarked_utf16):
        return unmarked_utf16, (
            f"decoded as {unmarked_utf16.upper()} (no byte order mark); "
            "re-save as UTF-8 if characters look wrong"
        )
    utf8_problem = _utf8_problem(path)
    if utf8_problem is None:
        return "utf-8", None
    sample = _detector_sample(path)
    _refuse_damaged_utf8(path, sample, truncated=utf8_problem == "truncated")
    for codec in _legacy_candidates(sample):
        if _decodes_whole_file(path, codec):
            return codec, f"decoded as {codec} (not valid UTF-8); re-save as UTF-8 if characters look wrong"
    raise ConversionError(
        f"undecodable text: {path.name} is not UTF-8 and its encoding could not be detected "
        "with confidence; re-save it as UTF-8"
    )


def read_text(path: Path | str) -> tuple[str, str | None]:
    """Return ``(text, warning)``: the whole file decoded with ``detect_encoding``.

    For small files (markdown, JSON). Newlines are translated to ``\\n`` as by
    ``open()`` in text mode; the BOM, if any, is not part of the text.

    The usual file is plain UTF-8, and then one read does: bytes that do not start
    with a UTF-8 BOM, hold no NUL in their first 4 KB (so they cannot look like
    UTF-16 without a BOM, and no UTF-16/32 BOM is valid UTF-8) and decode strictly
    as UTF-8 are exactly what ``detect_encoding`` calls UTF-8 with no warning, after
    opening the file up to four times. Anything else is read as it decides.
    """
    path = Path(path)
    data = path.read_bytes()
    if not data.startswith(codecs.BOM_UTF8) and b"\x00" not in data[:_UTF16_SNIFF_BYTES]:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:  # open()'s universal newlines
            return (text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text), None
    return _read_detected(path)


def _read_detected(path: Path) -> tuple[str, str | None]:
    """``read_text`` for any file: ``detect_encoding``, then the file in text mode."""
    codec, warning = detect_encoding(path)
    with path.open("r", encoding=codec) as stream:
        return stream.read(), warning


def is_blank_file(path: Path | str, codec: str) -> bool:
    """True when the file holds nothing but whitespace once decoded (read in chunks)."""
    with Path(path).open("r", encoding=codec) as stream:
        while chunk := stream.read(_CHUNK_SIZE):
            if chunk.strip():
                return False
    return True


def _unmarked_utf16(path: Path) -> str | None:
    """``utf-16-le``/``-be`` when the head looks like UTF-16 without a BOM.

    The ASCII characters of UTF-16 text (digits, commas, newlines, Latin letters) put
    a NUL in every other byte; a UTF-8 or 8-bit file almost never holds a NUL. So the
    test is: at least 4 code units, at least a quarter of the odd (LE) or even (BE)
    bytes are NUL, and almost none of the other half.
    """
    with path.open("rb") as stream:
        head = stream.read(_UTF16_SNIFF_BYTES)
    head = head[: len(head) // 2 * 2]
    if len(head) < 8:
        return None
    even_nuls = head[0::2].count(0) / (len(head) // 2)
    odd_nuls = head[1::2].count(0) / (len(head) // 2)
    if odd_nuls >= 0.25 and even_nuls < 0.05:
        return "utf-16-le"
    if even_nuls >= 0.25 and odd_nuls < 0.05:
        return "utf-16-be"
    return None


def _decodes_whole_file(path: Path, codec: str) -> bool:
    return _decoding_problem(path, codec) is None


def _utf8_problem(path: Path) -> str | None:
    return _decoding_problem(path, "utf-8")


def _decoding_problem(path: Path, codec: str) -> str | None:
    """None when ``codec`` decodes the whole file strictly; ``"truncated"`` when the only
    problem is a multi-byte character cut at the end; else ``"invalid"``."""
    decoder = codecs.getincrementaldecoder(codec)(errors="strict")
    try:
        with path.open("rb") as stream:
            while chunk := stream.read(_CHUNK_SIZE):
                decoder.decode(chunk)
    except UnicodeDecodeError:
        return "invalid"
    try:
        decoder.decode(b"", final=True)  # a truncated multi-byte sequence at EOF fails here
    except UnicodeDecodeError:
        return "truncated"
    return None


def _detector_sample(path: Path) -> bytes:
    """Up to ``_SAMPLE_BYTES`` of the file's lines that hold a non-ASCII byte, from
    anywhere in the file. ASCII lines tell a detector nothing and dilute what tells it
    something: one line of Cyrillic after 20,000 ASCII lines must still decide."""
    sample = bytearray()
    carry = b""
    with path.open("rb") as stream:
        while len(sample) < _SAMPLE_BYTES and (chunk := stream.read(_CHUNK_SIZE)):
            chunk = carry + chunk
            if chunk.isascii():  # most chunks of most files: nothing to sample
                carry = chunk[chunk.rfind(b"\n") + 1:]
                continue
            lines = chunk.split(b"\n")
            carry = lines.pop()  # maybe cut mid-line: joined to the next chunk
            if len(carry) > _SAMPLE_BYTES:  # one very long line: sampled as it stands
                lines.append(carry)
                carry = b""
            for line in lines:
                if not line.isascii():
                    sample += line + b"\n"
    if not carry.isascii():
        sample += carry
    return _cut_between_characters(bytes(sample[:_SAMPLE_BYTES]))


def _cut_between_characters(data: bytes) -> bytes:
    """``data`` up to its last byte below 0x30 (controls, space, ``!"#$%&'()*+,-./``):
    no legacy multi-byte encoding uses those inside a character, so no character is
    split (a split one would make the detector rule out the right encoding)."""
    for index in range(len(data) - 1, max(len(data) - 4096, -1), -1):
        if data[index] < 0x30:
            return data[: index + 1]
    return data


def _refuse_damaged_utf8(path: Path, sample: bytes, *, truncated: bool) -> None:
    """Raise when bytes that fail strict UTF-8 are nonetheless UTF-8 text (step 4)."""
    non_ascii = sum(1 for byte in sample if byte >= 0x80)
    in_sequences = sum(len(match) for match in _UTF8_SEQUENCE.findall(sample))
    # Valid UTF-8 up to a character cut at the end; one that holds no complete UTF-8
    # character at all may be legacy text ending in an accent (``Café`` in cp1252).
    if truncated and in_sequences and in_sequences == non_ascii - len(_cut_character(sample)):
        raise ConversionError(
            f"undecodable text: {path.name} ends in the middle of a UTF-8 character "
            "(a truncated file?); restore the complete file or re-save it as UTF-8"
        )
    if non_ascii and in_sequences * 2 >= non_ascii:
        raise ConversionError(
            f"undecodable text: {path.name} is UTF-8 with invalid bytes (damaged, or mixed with "
            "another encoding); fix those bytes or re-save the whole file as UTF-8"
        )


def _cut_character(data: bytes) -> bytes:
    """The trailing bytes of ``data`` that begin a UTF-8 character without ending it."""
    tail = data[-3:]
    for start in range(len(tail)):
        if tail[start] >= 0xC0:
            return tail[start:]
    return b""


def _legacy_candidates(sample: bytes) -> list[str]:
    """Codecs to try, most plausible first (step 5): the detector's ranking without the
    implausible readings, and ``cp1252`` first when it wins the tie-break."""
    from charset_normalizer import from_bytes  # imported here: only legacy files need it

    matches = list(from_bytes(sample, cp_exclusion=_NOT_ASKED, enable_fallback=False))
    ranked = [match.encoding for match in matches
              if match.encoding != "ascii" and not _implausible_reading(match.encoding, sample)]
    # threshold=1.0: measure cp1252's mess however high, so it can be compared
    western = from_bytes(sample, cp_isolation=[_PREFERRED_LEGACY], threshold=1.0, enable_fallback=False).best()
    if western is not None and _western_wins(western, matches[0] if matches else None):
        ranked.insert(0, _PREFERRED_LEGACY)
    return list(dict.fromkeys(ranked))


def _western_wins(western: Any, best: Any) -> bool:
    """cp1252's reading goes first when it is plausible (no tell-tale sign against a letter) and
    either reads as cleanly as the detector's best, or the best is itself a Latin-script
    reading (on short samples the detector cannot tell cp1252 from cp437, cp850, cp1250
    or mac_roman, and cp1252 is by far the most common). With no best at all, cp1252
    must pass the detector's own bar (mess under 0.2)."""
    if _symbol_against_letter(str(western)):
        return False
    if best is None:
        return western.chaos < _DETECTOR_THRESHOLD
    return western.chaos <= best.chaos or _latin_letters_only(str(best))


def _latin_letters_only(text: str) -> bool:
    return all(not char.isalpha() or unicodedata.name(char, "").startswith("LATIN")
               for char in set(_NON_ASCII.findall(text)))


def _implausible_reading(codec: str, sample: bytes) -> bool:
    """True for a CJK reading that text in that language would not give, so that bytes
    of another script, which also decode there, are not read that way (with no other
    candidate left the file is undecodable, an error rather than mojibake):

    - Korean where most Hangul syllables are outside EUC-KR's 2,350 common ones: cp949
      adds 8,822 rare ones, and Shift-JIS reads as those (``名前`` -> ``뼹멟``); a real
      cp949 file uses a few (``똠``, ``뷁``) among common ones;
    - Korean where a fifth or more of the letters are Hanja: modern Korean writes
      Hangul, while GB18030 Chinese read as EUC-KR comes out Hanja-heavy
      (``姓名,城市`` -> ``檎츰,냘懇``);
    - Japanese made mostly of half-width katakana, which is how KOI8-R Cyrillic
      reads as Shift-JIS (``Заметка`` -> ``酤ﾍﾅﾔﾋﾁ``).
    """
    if codec not in _KOREAN_CODECS and codec not in _JAPANESE_CODECS:
        return False
    try:
        text = sample.decode(codec)
    except UnicodeDecodeError:
        return True
    if codec in _JAPANESE_CODECS:
        half_width = sum(1 for char in text if "\uff61" <= char <= "\uff9f")
        letters = sum(1 for char in text if not char.isascii() and char.isalpha())
        return half_width * 2 > letters
    syllables = [char for char in text if "\uac00" <= char <= "\ud7a3"]
    rare = sum(1 for char in syllables if not _is_common_hangul(char))
    hanja = sum(1 for char in text if "\u4e00" <= char <= "\u9fff" or "\uf900" <= char <= "\ufaff")
    return rare * 2 > len(syllables) or hanja * 5 >= len(syllables) + hanja > 0


def _is_common_hangul(syllable: str) -> bool:
    """One of EUC-KR's 2,350 syllables (two bytes; Python spells the others in eight)."""
    try:
        return len(syllable.encode("euc_kr")) == 2
    except UnicodeEncodeError:
        return False


def _symbol_against_letter(text: str) -> bool:
    """True when ``£ ¥ ¯ ³ ¹`` touch a letter (``£ódŸ``, ``odby³o``, ``s¹``): how Polish
    text (cp1250's Ł Ą Ż ł ą) reads as cp1252. Signs Western text sets against words
    (``™``, ``®``, ``°C``, ``n°``) are not tells. (``m³`` is: a cp1252 file holding it
    falls back to the detector's ranking.)"""
    for found in _NON_ASCII.finditer(text):
        if found.group() in _CENTRAL_EUROPEAN_TELLS:
            index = found.start()
            neighbours = text[max(index - 1, 0):index] + text[index + 1:index + 2]
            if any(char.isalpha() for char in neighbours):
                return True
    return False
