"""The Curator: the only model stage of ingestion.

It asks an OpenAI-compatible endpoint for a node's summary, tags and link picks,
holds the answer to the summary contract (retrying with the validation error,
trimming a summary that is only too long), and never blocks the batch: a
transport failure, a refusal or a bug in here gives the node its derived summary
and a one-line problem for the report.

Start-up decision: ``start()`` raises ``CuratorConfigError`` only for problems the
user fixes in configuration (the key refused, a ``local`` model on an endpoint
without a usable ``/models``); an endpoint that cannot be reached records a
transport error and marks the curator *degraded*, so every node falls back at once.
The same happens mid-batch after ``degrade_after_failures`` consecutive nodes
failed on transport, so a dead endpoint costs seconds, not retries times nodes.
"""
from __future__ import annotations

import threading
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Literal, Sequence

from monkeyllm_core.store.messages import one_line
from monkeyllm_gardener.curator import prompts
from monkeyllm_gardener.curator.contract import (
    TRIMMABLE,
    content_year_months,
    merge_tags,
    summary_problems,
    trim_summary,
)
from monkeyllm_gardener.curator.replies import ReplyFormatError, link_ids, parse_reply_object
from monkeyllm_gardener.curator.settings import LOCAL_MODEL, CuratorConfigError, CuratorSettings
from monkeyllm_gardener.curator.transport import ChatTransport, TransportFailure

MAX_CANDIDATES = 8
PROPOSED_LINK_CONFIDENCE = 0.3
STAT_KEYS = (
    "llm_summaries",
    "fallbacks",
    "retries",
    "skipped",
    "links_proposed",
    "proposal_fallbacks",
    "branch_rollups",
    "branch_fallbacks",
    "transport_errors",
    "rejected",
    "repaired",
)


@dataclass(frozen=True)
class Candidate:
    """A node the catalog offers as a possible related-to target."""

    id: str
    title: str
    summary: str


@dataclass(frozen=True, kw_only=True)
class CurationRequest:
    node_id: str
    node_type: str
    title: str
    text: str  # the body; only the first settings.max_content_chars are sent
    derived_summary: str  # the deterministic summary: always valid, the fallback
    tags: Sequence[str] = ()
    candidates: Sequence[Candidate] = ()
    content_date: str | None = None  # a date hint the pipeline knows (e.g. from metadata)


@dataclass(frozen=True, kw_only=True)
class CurationOutcome:
    node_id: str
    summary: str
    summary_source: Literal["llm", "fallback"]
    tags: list[str] = field(default_factory=list)
    links: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class BranchRequest:
    branch_id: str
    title: str
    entry_lines: Sequence[str]  # "- [[id]] — summary" of each child
    fallback_summary: str


@dataclass(frozen=True, kw_only=True)
class _Answer:
    """What came of asking the model for one summary."""

    summary: str | None  # None: rejected or failed, use the fallback
    reply: dict[str, Any] | None  # the last parsed JSON object, if any
    problems: list[str]


class _Stats:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts = dict.fromkeys(STAT_KEYS, 0)

    def add(self, key: str, amount: int = 1) -> None:
        with self._lock:
            self._counts[key] += amount

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)


class Curator:
    def __init__(
        self,
        settings: CuratorSettings,
        *,
        directives: str | None = None,
        default_tags: Sequence[str] = (),
    ) -> None:
        self.settings = settings
        self._directives = directives
        self._default_tags = list(default_tags)
        self._stats = _Stats()
        self._lock = threading.Lock()
        self._transport: ChatTransport | None = None
        self._executor: ThreadPoolExecutor | None = None
        self._model = settings.model
        self._json_mode = True
        self._degraded: str | None = None
        self._consecutive_transport_failures = 0
        self._problems: list[str] = []

    # -- lifecycle -----------------------------------------------------------

    def start(self) -> Curator:
        """Resolve the model. Raises CuratorConfigError for configuration problems
        only; an unreachable endpoint degrades the curator instead (see module doc)."""
        if self._transport is not None:
            return self
        self._transport = ChatTransport(self.settings, on_error=lambda: self._stats.add("transport_errors"))
        if self.settings.model != LOCAL_MODEL:
            return self  # named explicitly: nothing to ask before the first node
        try:
            self._model = self._transport.first_model()  # CuratorConfigError when it lists none
        except TransportFailure as failure:
            self._raise_if_configuration(failure)
            self._degrade(f"could not resolve the 'local' model: {failure}")
        return self

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None

    def __enter__(self) -> Curator:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def model(self) -> str:
        return self._model

    @property
    def degraded(self) -> str | None:
        """Why the curator stopped calling the model, or None while it works."""
        return self._degraded

    @property
    def problems(self) -> list[str]:
        """Run-level one-line notes (degradation, branch fallbacks, protocol changes)."""
        with self._lock:
            return list(self._problems)

    def stats(self) -> dict[str, int]:
        return self._stats.snapshot()

    # -- nodes -----------------------------------------------------------------

    def curate_many(self, requests: Iterable[CurationRequest]) -> Iterator[CurationOutcome]:
        """Outcomes in input order, with up to ``concurrency`` requests in flight."""
        self.start()
        executor = self._pool()
        window: deque[Future[CurationOutcome]] = deque()
        # Twice the workers queued, so a worker never idles while the head is slow.
        queued_limit = 2 * self.settings.concurrency
        try:
            for request in requests:
                window.append(executor.submit(self._curate_safely, request))
                if len(window) >= queued_limit:
                    yield window.popleft().result()
            while window:
                yield window.popleft().result()
        finally:
            for pending in window:
                pending.cancel()

    def curate(self, request: CurationRequest) -> CurationOutcome:
        """One node, on the calling thread."""
        self.start()
        return self._curate_safely(request)

    def _curate_safely(self, request: CurationRequest) -> CurationOutcome:
        try:
            return self._curate(request)
        except Exception as exc:  # a bug here must not fail the batch: state it, fall back
            self._stats.add("fallbacks")
            return CurationOutcome(
                node_id=request.node_id,
                summary=request.derived_summary,
                summary_source="fallback",
                tags=merge_tags(request.tags, self._default_tags)[0],
                problems=[f"curator error ({type(exc).__name__}: {_short_line(str(exc))}); kept the derived summary"],
            )

    def _curate(self, request: CurationRequest) -> CurationOutcome:
        if not request.text.strip() and not request.title.strip():
            self._stats.add("skipped")
            return self._fallback_outcome(request, [], "curation skipped: nothing to read")
        if self._degraded:
            self._stats.add("fallbacks")
            return self._fallback_outcome(request, [], f"curation skipped (curator degraded: {self._degraded})")
        candidates = usable_candidates(request.node_id, request.candidates)
        dates = content_year_months(request.text, content_date=request.content_date)
        messages = [
            {"role": "system", "content": prompts.node_system_prompt(self._directives)},
            {
                "role": "user",
                "content": prompts.node_user_message(
                    node_id=request.node_id,
                    node_type=request.node_type,
                    title=request.title,
                    text=request.text,
                    max_content_chars=self.settings.max_content_chars,
                    tags=list(request.tags),
                    candidates=[(c.id, c.title, c.summary) for c in candidates],
                    dates=dates,
                    content_date=request.content_date,
                ),
            },
        ]
        answer = self._ask_for_summary(messages, content=request.text, content_date=request.content_date)
        reply = answer.reply or {}
        problems = list(answer.problems)
        model_tags = reply.get("tags") if isinstance(reply.get("tags"), list) else []
        tags, tag_problems = merge_tags(request.tags, self._default_tags, model_tags)
        links, link_problems = self._accept_links(request.node_id, link_ids(reply.get("links")), candidates)
        problems += tag_problems + link_problems
        fell_back = answer.summary is None
        self._stats.add("fallbacks" if fell_back else "llm_summaries")
        return CurationOutcome(
            node_id=request.node_id,
            summary=request.derived_summary if fell_back else answer.summary,
            summary_source="fallback" if fell_back else "llm",
            tags=tags,
            links=links,
            problems=problems,
        )

    def _fallback_outcome(self, request: CurationRequest, problems: list[str], reason: str) -> CurationOutcome:
        tags, tag_problems = merge_tags(request.tags, self._default_tags)
        return CurationOutcome(
            node_id=request.node_id,
            summary=request.derived_summary,
            summary_source="fallback",
            tags=tags,
            problems=[*problems, f"{reason}; kept the derived summary", *tag_problems],
        )

    def _accept_links(
        self, node_id: str, proposed: list[str], candidates: Sequence[Candidate]
    ) -> tuple[list[dict[str, Any]], list[str]]:
        allowed = {candidate.id for candidate in candidates}
        links: list[dict[str, Any]] = []
        problems: list[str] = []
        for target in proposed:
            if target not in allowed:
                self._stats.add("proposal_fallbacks")
                self._stats.add("rejected")
                problems.append(f"proposed link to {_quoted(target)} dropped: not in the candidate list")
                continue
            if any(link["target"] == target for link in links):
                continue
            if len(links) == prompts.MAX_LINKS:
                problems.append(f"proposed link to {_quoted(target)} dropped: at most {prompts.MAX_LINKS} links")
                continue
            links.append({"rel": "related-to", "target": target, "confidence": PROPOSED_LINK_CONFIDENCE})
        self._stats.add("links_proposed", len(links))
        return links, problems

    # -- branches ---------------------------------------------------------------

    def summarize_branch(self, request: BranchRequest) -> str | None:
        """A model summary of the branch from its children's entry lines, or None
        to use the deterministic fallback. An empty branch is ``skipped``."""
        self.start()
        if not request.entry_lines:
            self._stats.add("skipped")
            return None
        if self._degraded:
            self._stats.add("branch_fallbacks")
            return None
        messages = [
            {"role": "system", "content": prompts.branch_system_prompt(self._directives)},
            {
                "role": "user",
                "content": prompts.branch_user_message(
                    branch_id=request.branch_id, title=request.title, entry_lines=request.entry_lines
                ),
            },
        ]
        try:
            answer = self._ask_for_summary(messages, content="\n".join(request.entry_lines), content_date=None)
        except Exception as exc:  # never fail a rollup on a bug here
            answer = _Answer(summary=None, reply=None, problems=[f"curator error ({type(exc).__name__})"])
        if answer.summary is None:
            self._stats.add("branch_fallbacks")
            self._note(f"branch {request.branch_id}: {'; '.join(answer.problems) or 'no summary'}")
            return None
        self._stats.add("branch_rollups")
        return answer.summary

    # -- the model conversation ------------------------------------------------------

    def _ask_for_summary(
        self, messages: list[dict[str, Any]], *, content: str, content_date: str | None
    ) -> _Answer:
        reply: dict[str, Any] | None = None
        problems: list[str] = []
        failure: list[str] = []
        for attempt in range(self.settings.summary_attempts):
            if attempt:
                self._stats.add("retries")
            try:
                text = self._complete(messages)
            except TransportFailure as exc:
                self._note_transport_failure(str(exc))
                problems.append(f"curation failed: {exc}; kept the derived summary")
                return _Answer(summary=None, reply=reply, problems=problems)
            self._note_transport_success()
            try:
                parsed = parse_reply_object(text)
            except ReplyFormatError as exc:
                failure = [str(exc)]
            else:
                reply = parsed
                summary = parsed.get("summary")
                summary = " ".join(summary.split()) if isinstance(summary, str) else ""
                found = summary_problems(summary, content, content_date=content_date)
                if not found:
                    return _Answer(summary=summary, reply=reply, problems=problems)
                if all(problem.code in TRIMMABLE for problem in found):
                    trimmed = trim_summary(summary)
                    if not summary_problems(trimmed, content, content_date=content_date):
                        self._stats.add("repaired")
                        problems.append(
                            f"model summary trimmed to fit the contract ({len(summary)} -> {len(trimmed)} characters)"
                        )
                        return _Answer(summary=trimmed, reply=reply, problems=problems)
                failure = [problem.message for problem in found]
            messages = [
                *messages,
                {"role": "assistant", "content": text},
                {"role": "user", "content": prompts.retry_message(failure)},
            ]
        self._stats.add("rejected")
        attempts = self.settings.summary_attempts
        problems.append(
            f"model summary rejected after {attempts} attempt(s) ({'; '.join(failure)}); kept the derived summary"
        )
        return _Answer(summary=None, reply=reply, problems=problems)

    def _complete(self, messages: list[dict[str, Any]]) -> str:
        assert self._transport is not None
        json_mode = self._json_mode
        try:
            return self._transport.complete(
                model=self._model, messages=messages, max_tokens=self.settings.max_tokens, json_mode=json_mode
            )
        except TransportFailure as exc:
            if not (json_mode and exc.status in (400, 422)):
                raise
        # The server refused response_format: ask for JSON in the prompt only, from now on.
        with self._lock:
            if self._json_mode:
                self._json_mode = False
                self._problems.append("the endpoint refused response_format json_object; JSON is asked for in the prompt only")
        return self._transport.complete(
            model=self._model, messages=messages, max_tokens=self.settings.max_tokens, json_mode=False
        )

    # -- degradation -------------------------------------------------------------

    def _note_transport_failure(self, reason: str) -> None:
        with self._lock:
            self._consecutive_transport_failures += 1
            failed = self._consecutive_transport_failures
        if failed >= self.settings.degrade_after_failures:
            self._degrade(f"{failed} requests in a row failed on transport, last: {reason}")

    def _note_transport_success(self) -> None:
        with self._lock:
            self._consecutive_transport_failures = 0

    def _degrade(self, reason: str) -> None:
        with self._lock:
            if self._degraded is None:
                self._degraded = _short_line(reason)
                self._problems.append(f"curator degraded: {self._degraded}; remaining nodes keep their derived summaries")

    def _raise_if_configuration(self, failure: TransportFailure) -> None:
        if failure.status in (401, 403):
            raise CuratorConfigError(
                f"{self.settings.endpoint} refused the API key (HTTP {failure.status}); check MONKEYLLM_LLM_API_KEY"
            )
        if failure.status is not None and failure.status < 500 and failure.status not in (408, 409, 429):
            raise CuratorConfigError(
                f"MONKEYLLM_LLM_MODEL is 'local' but {self.settings.endpoint}/models answered "
                f"HTTP {failure.status}; name the model with MONKEYLLM_LLM_MODEL"
            )

    def _note(self, line: str) -> None:
        with self._lock:
            self._problems.append(_short_line(line))

    def _pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(
                    max_workers=self.settings.concurrency, thread_name_prefix="curator"
                )
            return self._executor


def usable_candidates(node_id: str, candidates: Iterable[Candidate]) -> list[Candidate]:
    """The closed list the model may pick from: never the node itself, a branch
    index or a _meta node (the pipeline filters too; this is the defensive copy),
    no duplicates, at most eight."""
    kept: list[Candidate] = []
    seen: set[str] = {node_id}
    for candidate in candidates:
        cid = candidate.id
        if cid in seen or cid.endswith("_index") or cid.startswith("_meta"):
            continue
        seen.add(cid)
        kept.append(candidate)
        if len(kept) == MAX_CANDIDATES:
            break
    return kept


def _short_line(text: str, limit: int = 300) -> str:
    """``text`` as one clean line (what a model or a server said can hold escapes),
    cut to ``limit`` characters."""
    line = one_line(text)
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _quoted(text: str) -> str:
    return repr(_short_line(text, 80))
