"""The Canopy: the optional vector layer (concepts.md, "Entry search, and the optional vectors").

One vector per node (title and summary, ``index.embedded_text``), built offline by
``vine canopy build`` against an OpenAI-compatible ``/embeddings`` endpoint, kept in
``_derived/canopy.db`` (disposable, like all of ``_derived/``) with the model and
dimension that made it. What lives here:

- ``embedder``: the ``Embedder`` protocol and ``OpenAIEmbedder`` (``MONKEYLLM_EMBED_*``).
- ``index``: the file, what is embedded and its hash, and loading a whole index.
- ``build``: embedding only what changed, staged and swapped in when complete.
- ``dense``: what the reads use: locate's vector ranks (fused by RRF in
  ``read/locate.py``), the Gauntlet's frontier order for look, move and scan, and
  the stale count (nodes written since the last build).

Nothing here is needed for BM25: without an embedder configured no read imports
numpy or openai (the ``canopy`` extra: ``pip install 'monkeyllm[canopy]'``).
"""
