"""The Ranger's health report: what a person should look at, never acted on here.

- ``needs_split``: the branches validate flags (over 150 entries or 3,000 tokens,
  ``forest/validate.py``);
- ``over_connected``: nodes of typed-edge degree over 50, candidates to become a
  branch (concepts.md, Typed edges);
- ``validate``: validate's errors, its warning count and its note;
- ``sources_missing``: passports whose source file is gone. The Gardener records
  the source as ``origin``, a ``file://`` URI of the absolute path it read
  (``source_path`` is relative to an adopted root that may have moved), and
  ``vine sync`` marks a vanished one ``stale: true``; both are reported, and the
  node is left standing (deciding that knowledge should stop existing is a human's
  call);
- ``uncertain_links``: declared links below 1.0, by band of the lifecycle
  (proposals at 0.3, shortcuts at 0.5, promoted at 0.8);
- ``heat``: the table's size and shape after evaporation;
- ``payloads``: a passport's payload absent, or its bytes no longer its
  ``payload_hash``. The hash of a file whose size and mtime have not moved since
  the last cycle of this process is not computed again (``PayloadHashes``), and
  validate's drift check in the same cycle reads the same cache, so a payload is
  hashed at most once per cycle.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable
from urllib.parse import unquote

from ..errors import VineError
from ..hashing import sha256_file
from ..vine import Vine
from ..writing.payloads import payload_file
from .heat_table import HeatAfterEvaporation

OVER_CONNECTED = 50
CONFIDENCE_BANDS = ((0.0, 0.3), (0.3, 0.5), (0.5, 0.8), (0.8, 1.0))


@dataclass
class PayloadHashes:
    """sha256 by payload path, kept while the file's (size, mtime_ns) stay put."""

    known: dict[str, tuple[int, int, str]] = field(default_factory=dict)

    def of(self, path: Path) -> str:
        stat = path.stat()
        key = str(path)
        cached = self.known.get(key)
        if cached is not None and cached[:2] == (stat.st_size, stat.st_mtime_ns):
            return cached[2]
        digest = sha256_file(path)
        self.known[key] = (stat.st_size, stat.st_mtime_ns, digest)
        return digest


def health_report(vine: Vine, *, findings: Iterable[Any], note: str | None, degrees: dict[str, int],
                  heat: HeatAfterEvaporation, payload_hashes: PayloadHashes) -> dict[str, Any]:
    findings = list(findings)
    db = vine.catalog.db
    exists = {row[0] for row in db.execute("SELECT id FROM nodes")}
    return {
        "needs_split": [{"id": f.node, "why": f.message} for f in findings if f.code == "needs_split"],
        "over_connected": [{"id": node, "degree": degree}
                           for node, degree in sorted(degrees.items(), key=lambda item: (-item[1], item[0]))
                           if degree > OVER_CONNECTED and node in exists],
        "validate": {"errors": [f.line() for f in findings if f.level == "error"],
                     "warnings": sum(1 for f in findings if f.level == "warning"), "note": note},
        "sources_missing": sources_missing(db),
        "uncertain_links": uncertain_links(db),
        "heat": heat.shape(),
        "payloads": payload_health(vine.root, db, payload_hashes),
    }


def sources_missing(db: Any) -> list[dict[str, Any]]:
    out = []
    rows = db.execute("SELECT id, origin, stale FROM nodes WHERE stale = 1 OR origin LIKE 'file://%' ORDER BY id")
    for node, origin, stale in rows:
        path = unquote(origin[len("file://"):]) if isinstance(origin, str) and origin.startswith("file://") else None
        gone = path is not None and not os.path.lexists(path)
        if stale or gone:
            out.append({"id": node, "source": path, "marked_stale": bool(stale)})
    return out


def uncertain_links(db: Any) -> dict[str, Any]:
    bands = {f"{low:g}-{high:g}": 0 for low, high in CONFIDENCE_BANDS}
    rows = db.execute("SELECT confidence FROM edges WHERE inferred = 0 "
                      "AND typeof(confidence) IN ('real', 'integer') AND confidence < 1.0 AND confidence >= 0")
    total = 0
    for (confidence,) in rows:
        for low, high in CONFIDENCE_BANDS:
            if low <= confidence < high:
                bands[f"{low:g}-{high:g}"] += 1
                total += 1
                break
    return {"total": total, "bands": bands}


def payload_health(root: Path, db: Any, hashes: PayloadHashes) -> dict[str, Any]:
    missing, drifted, checked = [], [], 0
    for node, payload, expected in db.execute(
            "SELECT id, payload, payload_hash FROM nodes WHERE payload IS NOT NULL AND payload != '' ORDER BY id"):
        try:
            path = root / payload_file(node, str(payload))
        except VineError:
            continue  # a payload name outside its folder: validate's error says so
        checked += 1
        if not path.is_file():
            missing.append(node)
        elif expected and hashes.of(path) != expected:
            drifted.append(node)
    return {"checked": checked, "missing": missing, "drifted": drifted}
