"""Git's binary delta format (the payload of OFS_DELTA / REF_DELTA pack entries).

Tuned for the case the forest writer meets on every commit: a large text (a branch
``_index.md`` of ~1 MB) where a handful of small edits happened. The cost is a few
memcmp passes over the text, never a Python loop per byte:

- the common prefix and suffix are found by galloping comparisons
  (``bytes.startswith`` on a zero-copy memoryview slice is a memcmp);
- in the differing middle a greedy walk copies equal runs (again galloping) and,
  after each mismatch, resyncs by looking for a short anchor of one side inside a
  bounded window of the other (``bytes.find``). Windows are bounded and every failed
  resync consumes a window of the target, so the worst case stays linear, and the
  walk gives up as soon as the delta cannot be worth it.

Every copy instruction covers bytes that were compared equal, so the delta is
always exact; a poor resync only makes it larger.
"""
from __future__ import annotations

_ANCHOR = 32                     # bytes of one side looked up in the other to resync
_MIN_COPY = 16                   # shorter equal runs are cheaper as literal bytes
_ANCHOR_OFFSETS = (0, 8, 32, 128, 512, 2048)   # how far past a mismatch the anchor is taken
_WINDOWS = (256, 4096, 65536)    # resync search windows, tried smallest first
_MAX_COPY = 0x10000              # git's copy instructions carry at most 64 KiB
_MAX_INSERT = 127                # an insert instruction carries 1..127 literal bytes
_MIN_TARGET = 64                 # below this a delta never pays for its headers


def make_delta(base: bytes, target: bytes) -> bytes | None:
    """Git delta (the format of OFS_DELTA/REF_DELTA pack entries) turning base into target,
    or None when no small delta exists (caller then stores the object whole)."""
    if len(target) < _MIN_TARGET or not base:
        return None
    budget = len(target) // 2
    ops = _DeltaOps(base, target, budget)
    try:
        _diff(ops, base, target)
    except _NotWorthIt:
        return None
    delta = ops.encode()
    return delta if len(delta) <= budget else None


class _NotWorthIt(Exception):
    """The delta already exceeds its budget: storing the object whole is better."""


class _DeltaOps:
    """Collects copy/insert instructions and tracks their encoded size against a budget."""

    def __init__(self, base: bytes, target: bytes, budget: int) -> None:
        self._target = target
        self._pieces: list[bytes] = [_varint(len(base)), _varint(len(target))]
        self._size = len(self._pieces[0]) + len(self._pieces[1])
        self._budget = budget

    def copy(self, offset: int, length: int) -> None:
        while length > 0:
            chunk = min(length, _MAX_COPY)
            self._append(_copy_instruction(offset, chunk))
            offset += chunk
            length -= chunk

    def insert(self, start: int, end: int) -> None:
        target = self._target
        for chunk_start in range(start, end, _MAX_INSERT):
            chunk_end = min(end, chunk_start + _MAX_INSERT)
            self._append(bytes((chunk_end - chunk_start,)) + target[chunk_start:chunk_end])

    def budget_left(self) -> int:
        return self._budget - self._size

    def _append(self, piece: bytes) -> None:
        self._size += len(piece)
        if self._size > self._budget:
            raise _NotWorthIt
        self._pieces.append(piece)

    def encode(self) -> bytes:
        return b"".join(self._pieces)


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _copy_instruction(offset: int, size: int) -> bytes:
    # size 0x10000 is written with its third byte (0x01, flag 0x40), as git does;
    # readers also accept "no size bytes" for 0x10000.
    flags = 0x80
    args = bytearray()
    for i in range(4):
        byte = (offset >> (8 * i)) & 0xFF
        if byte:
            flags |= 1 << i
            args.append(byte)
    for i in range(3):
        byte = (size >> (8 * i)) & 0xFF
        if byte:
            flags |= 0x10 << i
            args.append(byte)
    return bytes((flags,)) + bytes(args)


def _forward_match(base_view: memoryview, base_pos: int, target: bytes, target_pos: int, limit: int) -> int:
    """Length of the equal run base[base_pos:] vs target[target_pos:], at most limit."""
    matched = 0
    step = 32
    while matched < limit:
        span = min(step, limit - matched)
        start = base_pos + matched
        if target.startswith(base_view[start:start + span], target_pos + matched):
            matched += span
            step *= 2
            continue
        # The first difference lies in [matched, matched + span): bisect it.
        while span > 1:
            half = span // 2
            start = base_pos + matched
            if target.startswith(base_view[start:start + half], target_pos + matched):
                matched += half
                span -= half
            else:
                span = half
        return matched
    return matched


def _backward_match(base_view: memoryview, base_end: int, target: bytes, target_end: int, limit: int) -> int:
    """Length of the equal run ending at base[:base_end] vs target[:target_end], at most limit."""
    matched = 0
    step = 32
    while matched < limit:
        span = min(step, limit - matched)
        end = base_end - matched
        if target.startswith(base_view[end - span:end], target_end - matched - span):
            matched += span
            step *= 2
            continue
        while span > 1:
            half = span // 2
            end = base_end - matched
            if target.startswith(base_view[end - half:end], target_end - matched - half):
                matched += half
                span -= half
            else:
                span = half
        return matched
    return matched


def _diff(ops: _DeltaOps, base: bytes, target: bytes) -> None:
    base_view = memoryview(base)
    target_view = memoryview(target)
    prefix = _forward_match(base_view, 0, target, 0, min(len(base), len(target)))
    suffix = _backward_match(base_view, len(base), target, len(target),
                             min(len(base), len(target)) - prefix)
    base_end = len(base) - suffix
    target_end = len(target) - suffix
    if prefix:
        ops.copy(0, prefix)

    base_pos, target_pos = prefix, prefix
    literal_start = target_pos
    while target_pos < target_end:
        run = _forward_match(base_view, base_pos, target, target_pos,
                             min(base_end - base_pos, target_end - target_pos))
        if run >= _MIN_COPY:
            ops.insert(literal_start, target_pos)
            ops.copy(base_pos, run)
            base_pos += run
            target_pos += run
            literal_start = target_pos
            continue
        resynced = _resync(base, base_view, base_pos, base_end, target, target_view, target_pos, target_end)
        if resynced is None:
            # Nothing nearby matches: this stretch of the target becomes literal.
            target_pos = min(target_end, target_pos + _WINDOWS[-1])
            if target_pos - literal_start > ops.budget_left():
                raise _NotWorthIt
        else:
            base_pos, target_pos = resynced
    ops.insert(literal_start, target_end)
    if suffix:
        ops.copy(base_end, suffix)


def _resync(base: bytes, base_view: memoryview, base_pos: int, base_end: int,
            target: bytes, target_view: memoryview, target_pos: int, target_end: int) -> tuple[int, int] | None:
    """After a mismatch at (base_pos, target_pos), the nearest positions where both agree again.

    Tries anchors of the base in the target (insertion, replacement) and anchors of the
    target in the base (deletion), in windows of growing size; picks the candidate that
    leaves the fewest target bytes literal. The result starts an equal run of at least
    _ANCHOR bytes, so the caller always makes progress.
    """
    for window in _WINDOWS:
        best: tuple[int, int, int, int] | None = None   # (target skip, base skip, base pos, target pos)
        for offset in _ANCHOR_OFFSETS:
            if offset > window:
                break
            anchor_at = base_pos + offset
            if anchor_at + _ANCHOR <= base_end:
                found = target.find(base_view[anchor_at:anchor_at + _ANCHOR], target_pos,
                                    min(target_end, target_pos + offset + window + _ANCHOR))
                if found >= 0:
                    back = _backward_match(base_view, anchor_at, target, found,
                                           min(offset, found - target_pos))
                    candidate = (found - back - target_pos, offset - back, anchor_at - back, found - back)
                    if best is None or candidate < best:
                        best = candidate
            anchor_at = target_pos + offset
            if anchor_at + _ANCHOR <= target_end:
                found = base.find(target_view[anchor_at:anchor_at + _ANCHOR], base_pos,
                                  min(base_end, base_pos + offset + window + _ANCHOR))
                if found >= 0:
                    back = _backward_match(base_view, found, target, anchor_at,
                                           min(offset, found - base_pos))
                    candidate = (offset - back, found - back - base_pos, found - back, anchor_at - back)
                    if best is None or candidate < best:
                        best = candidate
        if best is not None:
            return best[2], best[3]
    return None
