"""What a forest says about payloads that are not here.

Payloads never enter git, so a ``git clone`` of a forest has every passport and
none of the files they name. That is a state of the copy, not a fault of each
node: ``vine validate`` says it in one line and ``query`` names the way back, in
the same words.
"""
from __future__ import annotations

from typing import Sequence

RESTORE_COMMAND = "vine snapshot restore SNAPSHOT --forest NEW_DIR --payloads SNAPSHOT.payloads.tar"
SHOWN_IDS = 3  # enough to recognise which payloads are meant; the count says the rest


def absent_payloads_message(node_ids: Sequence[str]) -> str:
    """One line for every passport whose payload is not on disk."""
    count = len(node_ids)
    shown = ", ".join(node_ids[:SHOWN_IDS]) + (f" and {count - SHOWN_IDS} more" if count > SHOWN_IDS else "")
    noun = "payload" if count == 1 else "payloads"
    return (f"{count} {noun} not present ({shown}): restore them with `{RESTORE_COMMAND}` "
            "(payloads never enter git), or re-adopt their sources")

# the hint of a read that needed one payload that is not here
ABSENT_PAYLOAD_HINT = f"Payloads never enter git: restore it with `{RESTORE_COMMAND}`, or re-adopt its source."
