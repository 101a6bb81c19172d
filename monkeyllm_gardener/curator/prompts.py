"""The words sent to the model: the contract in the system prompt, the node and its
closed candidate list in the user message, the validation error on a retry."""
from __future__ import annotations

from typing import Sequence

from monkeyllm_core.forest.summary_contract import SUMMARY_MAX_CHARS, SUMMARY_MAX_SENTENCES
from monkeyllm_gardener.curator.contract import MAX_TAGS
from monkeyllm_gardener.curator.dates import describe_year_month

MAX_LINKS = 3
MAX_BRANCH_CHARS = 6000

_CONTRACT = f"""\
You write the summary of one node in a knowledge forest. An agent decides from the \
summary alone whether the node matters, so every word must carry scent.

The summary contract (checked in code; a failing answer is rejected):
- At most {SUMMARY_MAX_CHARS} characters in total, {1} to {SUMMARY_MAX_SENTENCES} sentences.
- Sentence one says what it is (category plus subject). Sentence two gives the key \
content: concrete numbers, names, time scope. An optional third says what is not here.
- Never open with "This document", "This file", "The document" or "File containing": \
start with the subject itself.
- Dated content carries its date: state at least the month and year.
- Write in the same language as the content.
"""

NODE_SYSTEM_PROMPT = _CONTRACT + f"""\
Also give up to {MAX_TAGS} tags: lowercase single words.
Also pick up to {MAX_LINKS} related nodes, only from the candidate ids listed in the \
message; picking none is a valid and common answer. Never invent an id.

Reply with one JSON object and nothing else:
{{"summary": "...", "tags": ["..."], "links": ["candidate id", ...]}}
"""

BRANCH_SYSTEM_PROMPT = _CONTRACT + """\
The node is a branch: a folder-like index. You are given the entry lines of its \
children; summarise what the branch holds as a whole (kinds of content, subjects, \
time span), not any single child.

Reply with one JSON object and nothing else:
{"summary": "..."}
"""


def node_system_prompt(directives: str | None) -> str:
    return _with_directives(NODE_SYSTEM_PROMPT, directives)


def branch_system_prompt(directives: str | None) -> str:
    return _with_directives(BRANCH_SYSTEM_PROMPT, directives)


def _with_directives(prompt: str, directives: str | None) -> str:
    if not directives or not directives.strip():
        return prompt
    return f"{prompt}\nDirectives from this forest's curator (follow them within the contract):\n{directives.strip()}\n"


def node_user_message(
    *,
    node_id: str,
    node_type: str,
    title: str,
    text: str,
    max_content_chars: int,
    tags: Sequence[str],
    candidates: Sequence[tuple[str, str, str]],
    dates: set[tuple[int, int]],
    content_date: str | None,
) -> str:
    shown = text[:max_content_chars]
    cut_note = (
        f" (first {len(shown)} of {len(text)} characters)" if len(text) > len(shown) else ""
    )
    lines = [f"Node id: {node_id}", f"Type: {node_type}", f"Title: {title}"]
    if tags:
        lines.append(f"Existing tags: {', '.join(tags)}")
    if content_date:
        lines.append(f"Content date: {content_date}")
    if dates:
        examples = ", ".join(describe_year_month(value) for value in sorted(dates)[-3:])
        lines.append(f"The content is dated ({examples}): the summary must state a month and year.")
    lines += ["", f"Content{cut_note}:", "<<<", shown, ">>>", ""]
    if candidates:
        lines.append(f"Candidate ids for links (pick 0 to {MAX_LINKS}, only from this list):")
        lines += [f"- {cid} — {ctitle}: {csummary}" for cid, ctitle, csummary in candidates]
    else:
        lines.append("Candidate ids for links: none, so reply with \"links\": [].")
    return "\n".join(lines)


def branch_user_message(*, branch_id: str, title: str, entry_lines: Sequence[str]) -> str:
    body: list[str] = []
    used = 0
    for line in entry_lines:
        if used + len(line) > MAX_BRANCH_CHARS:
            body.append(f"(… {len(entry_lines) - len(body)} more entries not shown)")
            break
        body.append(line)
        used += len(line) + 1
    return "\n".join([f"Branch id: {branch_id}", f"Title: {title}", "", "Entries:", *body])


def retry_message(problems: Sequence[str]) -> str:
    reasons = "; ".join(problems)
    return (
        f"Your answer was rejected: {reasons}. Reply again with the corrected JSON object "
        "only, keeping everything else that was right."
    )
