"""One Ranger cycle: evaporate, tend links, refresh Landmarks, report health.

The order matters: links are tended with the heat evaporation leaves, and the
Landmarks are ranked on the graph the tending leaves. A real cycle is a writable
``Vine`` (it holds the writer lock for the cycle and no longer) whose edits are
one bulk session, so the branch moves once at the end rather than once per
commit; a dry run opens the forest read-only, computes the same plan with the
same clock and writes nothing: no commit, no file, no heat.

It never deletes a node. Health is computed after the edits, from the files
(the cycle holds the lock, so no writer is mid-write) or, in a dry run, through
``check_forest``, which reads HEAD while another writer is at work.
"""
from __future__ import annotations

import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..forest.validate import check_forest, validate_forest
from ..read.ranger_settings import RangerSettings
from ..vine import Vine
from .health import PayloadHashes, health_report
from .heat_table import evaporate_and_read
from .landmarks import refresh_landmarks, typed_degrees
from .links import tend_links

PAYLOAD_CACHE_NOTE = "this engine keeps no cache of remote payloads: nothing to evict"


@dataclass
class RangerReport:
    forest: str
    dry_run: bool
    started: float
    seconds: float = 0.0
    settings: dict[str, float] = field(default_factory=dict)
    unknown_keys: list[str] = field(default_factory=list)
    evaporation: dict[str, int] = field(default_factory=dict)
    links: dict[str, Any] = field(default_factory=dict)
    landmarks: dict[str, Any] = field(default_factory=dict)
    health: dict[str, Any] = field(default_factory=dict)
    commits: list[dict[str, str]] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"forest": self.forest, "dry_run": self.dry_run, "started": round(self.started, 3),
                "seconds": round(self.seconds, 3), "settings": self.settings, "unknown_keys": self.unknown_keys,
                "evaporation": self.evaporation, "links": self.links, "landmarks": self.landmarks,
                "health": self.health, "commits": self.commits, "failed": self.failed}


def run_cycle(root: str | Path, *, dry_run: bool = False, payload_hashes: PayloadHashes | None = None) -> RangerReport:
    """One cycle. Raises E_SCHEMA for a bad ``_meta/ranger.yaml`` before the forest is
    opened, and E_LOCKED (a real cycle) when another writer holds the lock."""
    root = Path(root).resolve()
    settings = RangerSettings.load(root)
    hashes = payload_hashes if payload_hashes is not None else PayloadHashes()
    started, clock = time.time(), time.perf_counter()
    vine = Vine(root, writable=not dry_run)
    try:
        if dry_run:
            vine.read_context()  # the read-only catalog made current with the files first
        report = RangerReport(forest=str(root), dry_run=dry_run, started=started, settings=settings.known(),
                              unknown_keys=list(settings.unknown_keys))
        heat = evaporate_and_read(root, settings, started, dry_run=dry_run)
        report.evaporation = {"heat_rows": heat.evaporated, "session_rows": heat.expired}
        with nullcontext() if dry_run else vine.bulk():
            tending = tend_links(vine, heat.heat, settings, dry_run=dry_run)
            would_prune = [(e.node, e.rel, e.target) for e in tending.pruned] if dry_run else []
            degrees = typed_degrees(vine.catalog.db, without=would_prune)
            landmarks = refresh_landmarks(vine, degrees, dry_run=dry_run)
        report.links = {"promoted": [e.to_dict() for e in tending.promoted],
                        "pruned": [e.to_dict() for e in tending.pruned]}
        report.landmarks = landmarks.to_dict()
        report.commits = tending.commits + ([{"message": "ranger(landmarks)", "commit": landmarks.commit}]
                                            if landmarks.commit else [])
        report.failed = tending.failed
        if dry_run:
            checked = check_forest(vine, hash_of=hashes.of)
            findings, note = checked.findings, checked.note
        else:
            findings, note = validate_forest(vine, hash_of=hashes.of), None
        report.health = health_report(vine, findings=findings, note=note, degrees=degrees, heat=heat,
                                      payload_hashes=hashes)
        report.health["payload_cache"] = {"cap_gb": settings.payload_cache_gb, "evicted": 0,
                                          "note": PAYLOAD_CACHE_NOTE}
    finally:
        vine.close()
    report.seconds = time.perf_counter() - clock
    return report
