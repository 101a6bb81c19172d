"""File extensions as the Gardener compares them: lowercase, with the leading dot.

A converter claims ``.pdf``; a person writes ``PDF``, ``pdf`` or ``.pdf`` as a
command hook's key in ``_meta/gardener.yaml``, an entry point is named ``pdf``, a
file is ``Report.PDF`` or ``backup.tar.gz``. ``normalize_extension`` is the one
spelling rule for all of them, and ``extension_candidates`` the one rule for which
extensions a file name offers to claimants.

Other suffix rules do other jobs and live with them: an id's extension suffix
(``slugs.extension_slug``, no dot, slug characters only) and a media asset's file
name (``media.media_asset_name``, a plain ``[a-z0-9]`` suffix or none).
"""
from __future__ import annotations

from pathlib import PurePath

# ``a.b.c.tar.gz`` offers ``.c.tar.gz``, ``.tar.gz`` and ``.gz``: no converter claims
# a longer compound, and a name made of dots must not offer hundreds.
MAX_COMPOUND_SUFFIXES = 3


def normalize_extension(extension: object) -> str:
    """``"PDF"``, ``" pdf"`` and ``".pdf"`` all mean ``".pdf"``: stripped, lowercase,
    one leading dot. Nothing is refused here; who takes an extension from a person
    checks the result (``command_hooks.checked_extension``)."""
    text = str(extension).strip().lower()
    return text if text.startswith(".") else "." + text


def extension_candidates(filename: str) -> list[str]:
    """Extensions a file may be claimed by, most specific first: ``a.tar.gz`` ->
    ``[".tar.gz", ".gz"]``. A dotfile such as ``.bashrc`` has none."""
    suffixes = PurePath(filename).suffixes[-MAX_COMPOUND_SUFFIXES:]
    return ["".join(suffixes[start:]).lower() for start in range(len(suffixes))]
