"""The payloads a commit's passports name: what a snapshot must carry and a
restore must put back.

Read from one commit (``CommittedForest``), never from the work tree: the
bundle holds that commit, so the sidecar's payloads and the restored passports
describe the same state even while a writer moves the branch on.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import VineError
from ..store.committed import CommittedForest
from ..writing.payloads import payload_file


@dataclass(frozen=True)
class NamedPayload:
    node: str
    path: str            # relative to the forest root, posix
    sha256: str | None   # the passport's payload_hash; None when it states none


@dataclass(frozen=True)
class PayloadNames:
    payloads: list[NamedPayload]
    problems: list[str]  # passports that could not be read, or name a payload outside their folder

    def by_path(self) -> dict[str, list[NamedPayload]]:
        """Each payload file once, with every passport that names it (usually one)."""
        out: dict[str, list[NamedPayload]] = {}
        for named in self.payloads:
            out.setdefault(named.path, []).append(named)
        return out


def named_payloads(forest: CommittedForest) -> PayloadNames:
    payloads: list[NamedPayload] = []
    problems: list[str] = []
    for node_id in forest.node_files():
        try:
            fm = forest.read(node_id).frontmatter
            if not fm.get("payload"):
                continue
            path = payload_file(node_id, str(fm["payload"]))
        except VineError as exc:
            where = exc.message if exc.message.startswith(node_id) else f"{node_id}: {exc.message}"
            problems.append(f"{where} (a payload it names is not carried)")
            continue
        digest = fm.get("payload_hash")
        payloads.append(NamedPayload(node_id, path, str(digest) if digest else None))
    return PayloadNames(payloads, problems)
