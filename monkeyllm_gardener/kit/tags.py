"""Tags a converter declares: a source's free keywords as the forest spells tags.

A converter may pass tags in ``Conversion.frontmatter["tags"]``. Tags the source
already holds as tags (a note's ``tags:`` frontmatter) are the author's words and
are passed as written; keywords that are phrases (a photo's IPTC keywords, "Eiffel
Tower") are folded first, by the rule the Curator applies to every tag it plants:
lowercase, accents folded, one word (``eiffel-tower``). ``fold_tag`` is that rule;
its home is the Curator's contract, so a converter's tags and the Curator's never
disagree.
"""
from __future__ import annotations

from monkeyllm_gardener.curator.contract import fold_tag

__all__ = ["fold_tag"]
