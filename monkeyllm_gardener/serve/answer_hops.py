"""``answer`` with ``hops``: the navigator loop (``monkeyllm_gardener.navigator``)
reading through the forest's ``ForestService`` in the caller's client session, so
every hop is traced and heated like the caller's own reads."""
from __future__ import annotations

from typing import Any

from monkeyllm_gardener.navigator import Hunt, navigate

from .answer_model import AnswerModel, Meter
from .forest_service import ForestService

async def hunt(service: ForestService, client: str, model: AnswerModel, meter: Meter, *, name: str, question: str,
               hops: int, reply_tokens: int, started: float, deadline: float) -> Hunt:
    """``navigate`` on ``service``'s forest for ``client`` (no cache: every hop is a forest call)."""
    async def read(tool: str, args: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        return await service.acall(tool, args, client), False

    return await navigate(read, model, meter, name=name, question=question, hops=hops, reply_tokens=reply_tokens,
                          started=started, deadline=deadline)
