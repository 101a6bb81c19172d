"""The git object store: the forest's history, written by the engine itself.

- ``repo``: where the repository lives (worktrees, submodules) and what it holds.
- ``history``: one commit per write, the checkpoint policy (``CHECKPOINT_SECONDS``).
- ``packfile`` and ``delta``: the in-process pack writer and git's delta format.
- ``trees``: the branch's trees in memory, edited one entry at a time.
- ``committed``: the forest as its last commit has it (what readers trust mid-write).
- ``messages``: commit messages git accepts and a terminal shows safely.
"""
