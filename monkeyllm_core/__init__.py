"""monkeyllm_core: the minimal engine. Knows the forest and nothing else."""
from __future__ import annotations

from .errors import VineError, estimate_tokens
from .forest.passport import Node, parse_node, render_node
from .forest.init import init_forest
from .vine import Vine, is_forest
from .writing.request import DatasetSpec, NodeWrite, PayloadSpec

__all__ = ["Vine", "VineError", "Node", "NodeWrite", "DatasetSpec", "PayloadSpec", "init_forest", "is_forest",
           "parse_node", "render_node", "estimate_tokens"]
