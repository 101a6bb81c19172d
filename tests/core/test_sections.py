"""``## `` sections of a markdown body (forest/sections.py): the outline read with and
without fence tracking agree."""
from __future__ import annotations

import pytest

_SECTION_BODIES = [
    "",
    "# Title\n\nText.\n",
    "## One\n\ntext\n\n## Two  \n### Three\n##Four\n ## Five\n## \n##\n",
    "## Fenced\n\n```\n## not a header\n```\n\n## After\n",
    "~~~\n## inside\n~~~\n## outside\n",
    "  ```python\n## inside an indented fence\n```\n## after\n",
    "```\n## a fence never closed\n",
    "## CRLF\r\n\r\n## lone CR\r## after CR\n",
    "text\x0c## after a form feed\x0b## after a VT\x1c## after FS\x85## after NEL\n",
    "text\u2028## after LS\u2029## after PS\n## end without newline",
    "## \ttab-led header\t\n## trailing\u00a0space\u00a0\n",
    "inline `code` and ~approx~ marks, no fence\n## Header\n",
    "`` double ticks ``\n~~ double tildes ~~\n## Header\n",
]


@pytest.mark.parametrize("body", _SECTION_BODIES)
def test_the_outline_of_a_body_without_fences_is_the_fence_tracking_one(body: str) -> None:
    # outline's fence-free pass and the fence-tracking reading give the same headers, in order
    from monkeyllm_core.forest.sections import _heading_positions, outline

    assert outline(body) == [name for _, name in _heading_positions(body)]
    without_fences = body.replace("```", "'''").replace("~~~", "---")
    assert outline(without_fences) == [name for _, name in _heading_positions(without_fences)]
