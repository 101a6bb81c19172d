"""``vine troop QUESTION [--forest DIR] [--n 3] [--stop first|quorum|patience] [--hops 6] [--json]``.

Several navigators hunt the question at once (``monkeyllm_gardener.troop``) with
the model the ``MONKEYLLM_LLM_*`` variables bind, as ``answer`` does. The report
is the answer, its evidence, each forager's trail and tokens, the judge's call
and the totals; ``--json`` prints ``TroopResult.to_dict()`` and nothing else.

Exit codes: 0 answered (an answer citing evidence), 1 exhausted without one, 2
a usage or expected error, one line on stderr (no model bound names
MONKEYLLM_LLM_ENDPOINT; the model failing for every forager; a bad argument).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable

EXIT_OK, EXIT_EXHAUSTED = 0, 1


def troop_arguments(p: argparse.ArgumentParser, forest_arg: Callable[[argparse.ArgumentParser], None],
                    forest_of: Callable[[argparse.Namespace], Path]) -> None:
    p.add_argument("question")
    forest_arg(p)
    p.add_argument("--n", type=int, default=3, help="how many foragers (default 3, at most 10)")
    p.add_argument("--stop", choices=("first", "quorum", "patience"), default="first",
                   help="first confident answer (default), a quorum agreeing, or until harvests add nothing")
    p.add_argument("--hops", type=int, default=6, help="read calls per forager (default 6, at most 12)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=lambda args: cmd_troop(args, forest_of))


def cmd_troop(args: argparse.Namespace, forest_of: Callable[[argparse.Namespace], Path]) -> int:
    from .cli import UsageError
    from .kit.model import ModelConfigError
    from .serve.answer_model import model_for_answer
    from .troop import no_model_error, troop
    from .troop.hunt import check_request

    forest = forest_of(args)
    check_request(args.question, args.n, args.stop, args.hops)  # before the model binding is read
    try:
        model = model_for_answer(os.environ)
    except ModelConfigError as exc:
        raise UsageError(str(exc), "Fix the MONKEYLLM_LLM_* variables.") from None
    if model is None:
        raise no_model_error()
    try:
        result = troop(forest, args.question, n=args.n, stop=args.stop, hops=args.hops, model=model)
    finally:
        model.close()
    data = result.to_dict()
    sys.stdout.write((json.dumps(data, ensure_ascii=False) if args.json else render_text(data)) + "\n")
    sys.stdout.flush()
    return EXIT_OK if result.answered else EXIT_EXHAUSTED


def render_text(data: dict[str, Any]) -> str:
    """The report for a person."""
    lines = [f"answer: {data['answer'] or '(none: the troop found no answer)'}"]
    if data["evidence"]:
        lines.append("evidence: " + ", ".join(data["evidence"]))
    winner = f"forager {data['winner']}" if data["winner"] else "none"
    lines.append(f"winner: {winner}; stopped ({data['stop']['policy']}): {data['stop']['reason']}")
    lines.append("frontier: " + (", ".join(data["frontier"]) or "(locate found no entry point)"))
    for forager in data["foragers"]:
        usage = forager["usage"]
        head = (f"forager {forager['n']} from {forager['entry'] or 'the question'}: {forager['status']}, "
                f"{len(forager['trail'])} call(s), {usage['calls']} model call(s), "
                f"{usage['prompt']}+{usage['completion']} tokens, session {forager['session']}")
        lines.append(head)
        if forager.get("error"):
            lines.append(f"  error {forager['error']['code']}: {forager['error']['message']}")
        for call in forager["trail"]:
            marks = ("" if call["ok"] else "  (error)") + ("  (cache hit)" if call["cached"] else "")
            lines.append(f"  {call['n']}. {call['tool']} {call['id'] or ''}".rstrip() + marks)
        if forager["answer"]:
            lines.append(f"  answered: {forager['answer']}")
    judge = data["judge"]
    if judge is None:
        lines.append("judge: not asked (nothing was read)")
    elif not judge["ok"]:
        lines.append(f"judge: failed {judge['error']['code']}: {judge['error']['message']}")
    else:
        lines.append(f"judge: {judge['model']}, {judge['ms']:.0f} ms, "
                     f"{judge['usage']['prompt']}+{judge['usage']['completion']} tokens, "
                     f"{judge['reads_sent']} read(s) sent" +
                     (f", {judge['reads_left_out']} left out for the budget" if judge["reads_left_out"] else ""))
    totals = data["totals"]
    lines.append(f"totals: {totals['model_calls']} model call(s), {totals['prompt_tokens']}+"
                 f"{totals['completion_tokens']} tokens, {totals['forest_calls']} forest call(s) "
                 f"({totals['cache_hits']} cache hit(s)), forest {totals['forest_ms']:.0f} ms, "
                 f"wall {totals['wall_ms']:.0f} ms")
    return "\n".join(lines)
