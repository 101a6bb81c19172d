"""monkeyllm_core: the minimal engine. Knows the forest and nothing else.

The public names load on first use (PEP 562): ``from monkeyllm_core import
VineError`` costs the errors module alone, and importing any submodule
(``monkeyllm_core.store.messages``) no longer drags in the whole engine. A
command imports what it runs: ``vine --help`` none of it, a no-change sync
the writer but not the readers it never calls.
"""
from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (vine --help)
from .lazy_exports import lazy_exports

# public name -> the module that defines it
_EXPORTS = {
    "VineError": "errors", "estimate_tokens": "errors",
    "Node": "forest.passport", "parse_node": "forest.passport", "render_node": "forest.passport",
    "init_forest": "forest.init",
    "Vine": "vine", "is_forest": "forest.layout",
    "DatasetSpec": "writing.request", "NodeWrite": "writing.request", "PayloadSpec": "writing.request",
}

__all__ = ["Vine", "VineError", "Node", "NodeWrite", "DatasetSpec", "PayloadSpec", "init_forest", "is_forest",
           "parse_node", "render_node", "estimate_tokens"]

if TYPE_CHECKING:
    from .errors import VineError, estimate_tokens
    from .forest.init import init_forest
    from .forest.passport import Node, parse_node, render_node
    from .forest.layout import is_forest
    from .vine import Vine
    from .writing.request import DatasetSpec, NodeWrite, PayloadSpec

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
