"""The Troop: several navigators hunting one question together (concepts.md, The Troop).

    from monkeyllm_gardener.troop import troop

    result = troop("./brain", "what is the deadline to exchange a retail order?", n=3, stop="first")
    result.answer, result.evidence, result.winner
    result.to_dict()                     # the JSON `vine troop --json` prints (``result``)

N foragers, each a model of the ``MONKEYLLM_LLM_*`` binding (``model_for_answer``,
as ``answer`` uses) holding only the read primitives, start from the distinct
entry points of one locate; they share a session heat scope and a visited
cache, a stop discipline ends the hunt, one judge call writes the answer, and
only the winner's trail becomes persistent heat (``hunt``). The modules:
``hunt`` (the whole hunt, ``troop_call`` for a running event loop), ``forager``
(one navigator and its session), ``cache`` (the visited cache), ``stop`` (the
policies), ``judge``, ``result``.
"""
from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import TYPE_CHECKING

from monkeyllm_core import VineError

from .hunt import DEFAULT_HOPS, troop_call
from .result import TroopResult

if TYPE_CHECKING:
    from monkeyllm_core import Vine
    from monkeyllm_gardener.serve.answer_model import AnswerModel

__all__ = ["TroopResult", "no_model_error", "troop", "troop_call"]


def no_model_error() -> VineError:
    return VineError("E_UNSUPPORTED", "the troop has no model: MONKEYLLM_LLM_ENDPOINT is not set",
                     "Point MONKEYLLM_LLM_ENDPOINT at an OpenAI-compatible endpoint "
                     "(e.g. http://127.0.0.1:8080/v1); the foragers and the judge are its model.")


def troop(forest: str | Path | Vine, question: str, *, n: int = 3, stop: str = "first", hops: int = DEFAULT_HOPS,
          reply_tokens: int = 300, model: AnswerModel | None = None) -> TroopResult:
    """Hunt ``question`` in ``forest`` (a folder, or a ``Vine`` standing for its forest)
    with ``n`` foragers; ``stop`` is first, quorum or patience (``stop``); ``hops``
    bounds each forager's reads, ``reply_tokens`` each model reply. ``model``
    defaults to the environment's binding (closed afterwards; one passed in is
    the caller's). The forest is read through its own read-only Vine on one
    thread, as ``vine serve`` reads it: no lock, beside any writer.

    Expected failures raise ``VineError``: E_SCHEMA (a bad argument),
    E_NOT_A_FOREST, E_UNSUPPORTED (no model bound; one that refuses), E_TIMEOUT
    (the model failed for every forager, or the deadline passed)."""
    from monkeyllm_core import Vine, is_forest
    from monkeyllm_gardener.serve.answer_model import model_for_answer
    from monkeyllm_gardener.serve.forest_service import ForestService

    root = Path(forest.root if isinstance(forest, Vine) else forest).resolve()
    if not is_forest(root):
        raise VineError("E_NOT_A_FOREST", f"{root} is not a forest (no _meta/schema.md)",
                        "Pass a forest folder (vine init makes one).")
    bound = model if model is not None else model_for_answer(os.environ)
    if bound is None:
        raise no_model_error()
    service = ForestService(root.name or "forest", root, readonly=True)
    try:
        return asyncio.run(troop_call(service, question, model=bound, n=n, stop=stop, hops=hops,
                                      reply_tokens=reply_tokens))
    finally:
        service.close()
        if model is None:
            bound.close()
