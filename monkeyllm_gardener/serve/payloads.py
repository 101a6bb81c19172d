"""A node's payload file, as the server hands it out (MCP's ``view``, REST's payload route).

One rule for both: only a file inside the forest is ever served.
``payload_file`` already refuses a ``payload`` naming a path outside the node's
folder (E_FRONTMATTER); a symlink out of the forest is caught here, on the
resolved path, and answers as if there were no file (E_NOT_FOUND). The caller
hands in the frontmatter it has read, so the passport is parsed once per call.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from monkeyllm_core import Vine, VineError
from monkeyllm_core.snapshot.absent import ABSENT_PAYLOAD_HINT
from monkeyllm_core.writing.payloads import payload_file


def payload_in_forest(reader: Vine, node_id: str, frontmatter: dict[str, Any]) -> Path:
    """The resolved path of the payload ``frontmatter`` (the node's, read by the
    caller) names, which is inside the forest; it may be missing (see
    ``missing_payload``). E_NOT_FOUND for no payload, or one leading out of the forest."""
    payload = frontmatter.get("payload")
    if not payload:
        raise VineError("E_NOT_FOUND", f"{node_id} has no payload",
                        "Datasets and media nodes carry a payload file; pick reads a node's body.")
    real = (reader.root / payload_file(node_id, str(payload))).resolve()
    if not real.is_relative_to(reader.root):  # reader.root is resolved: a symlink out of the forest
        raise VineError("E_NOT_FOUND", f"{node_id}: payload {payload} is outside the forest",
                        "Payloads are files beside their passport: copy it into the forest (re-adopt its source).")
    return real


def missing_payload(node_id: str, frontmatter: dict[str, Any]) -> VineError:
    return VineError("E_NOT_FOUND", f"{node_id}: payload {frontmatter.get('payload')} is not present",
                     ABSENT_PAYLOAD_HINT)
