"""Snapshots: a forest as one file, and its payloads as an optional second one.

History is the forest's storage, so a backup is a git bundle of every ref
(``bundle.py``). Payloads were never in git and travel beside it in a sidecar
tar with a manifest (``sidecar.py``), each one checked against the payload_hash
of the passport that names it (``named.py``) on the way in and on the way out.
``create.py`` writes a snapshot, ``restore.py`` brings one back into a new
folder, all or nothing; ``absent.py`` is what a forest whose payloads are not
here (a ``git clone``) says about them.

Nothing is imported here: ``forest/validate.py`` and ``vine.py`` read
``absent.py``, and ``restore.py`` reads both of them, so the modules are
imported by name (``from monkeyllm_core.snapshot.create import create_snapshot``).
"""
