"""The write path: what makes a write all-or-nothing and a kill harmless.

- ``request``: what a caller asks a write for: the passport, the body, and a
  dataset or payload spec beside it (``NodeWrite``).
- ``transaction``: one write's touched files and payloads, applied or undone whole.
- ``files``: the text files as the writer reads and replaces them (a stat-checked
  cache, atomic replacement, spare copies dropped at the checkpoint).
- ``payloads``: installing, rebuilding and putting back dataset and media payloads.
- ``recovery``: after a kill, the next writable open puts back what the journal names.
- ``journal``: the write-ahead journal those two read and write.
- ``atomic``: a file replaced so readers never see half of it.
- ``lock``: one writer per forest; readers never wait.
- ``lineage`` and ``writer_probe``: what a process forked from the writer may hold,
  and whether the writer that left a lock or a pack is still alive.
"""
