"""The Gardener's hook specifications: the whole plugin API, specs only.

A plugin is a module (or object) with functions marked ``@hookimpl`` whose names
match the specs below. Built-in plugins in ``monkeyllm_plugins`` use exactly the
same specs a third party does.

Hooks evolve only by adding arguments; pluggy lets an implementation accept a
subset of the arguments, so old plugins keep working.

A new hook is one more spec here and nothing more in the host: the host calls
each implementation of any hook one at a time, in discovery order, and a plugin
that raises fails only its own call, as an outcome naming the plugin
(``PluginHost.call_each``, ``host/calls.py``); a ``monkeyllm.hooks`` entry point
named after the new hook works too. Hook wrappers are not supported.
"""
from __future__ import annotations

from typing import Any, Callable

import pluggy

PROJECT_NAME = "monkeyllm"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def register_converters(register: Callable[..., None]) -> None:
    """Register file converters by calling ``register(converter, priority=0.0)``.

    A converter is any object with:

    - ``name`` (str): unique, shown in reports and ``vine plugins``;
    - ``extensions`` (iterable of str): lowercase, with the dot (``".csv"``);
    - ``convert(path: pathlib.Path) -> Conversion``: pure, no forest access; raise
      ``ConversionError`` (or any exception) to fail that one file;
    - optionally ``requires`` (tuple of importable module names) and ``install_hint``
      (str): when a required module is missing the converter is *unavailable*, its
      files land in ``unsupported`` with the hint, and nothing crashes.

    Choice among claimants of one extension: command hooks first, then installed
    plugins, then built-ins; within one source, lower ``priority`` first, then plugin
    name, then registration order. The first claimant converts; when it fails the
    next one is tried and the failure is recorded as a fallback.

    Return value: ignored. Raising: the plugin's converters registered so far are
    kept, the error is reported by ``vine plugins`` and in the run report.
    """


@hookspec
def on_curate(draft: dict[str, Any]) -> dict[str, Any] | None:
    """Enrich a node's frontmatter draft before it is planted.

    ``draft`` is a copy of the passport fields the pipeline will plant (``id``,
    ``type``, ``title``, ``summary``, ``tags``, ``aliases``, ``links``, ...). Return the
    draft (mutated or replaced), or None to keep your mutations of ``draft``.

    Implementations are called one at a time, in discovery order, each on its own
    copy of the draft: a hook that raises has its edits discarded, the error is
    recorded in the report as ``(plugin, error)``, and the next hook still runs.
    ``id``, ``type`` and provenance fields cannot be changed by a hook; the result is
    validated before the plant (an invalid result is discarded and reported). The
    whole policy, rule by rule, is ``monkeyllm_gardener.on_curate_policy``.
    """


@hookspec
def register_describers(register: Callable[..., None]) -> None:
    """Register media describers by calling ``register(describer, priority=0.0)``.

    A describer has ``name`` (str), ``kinds`` (subset of ``{"image", "audio"}``) and
    ``describe(path: pathlib.Path, info: MediaInfo) -> str | None``, returning a
    markdown description of the file (what it shows, any legible text) or None
    to pass. Describers are tried in priority order before the built-in stub; one
    that raises is recorded as a warning and the next one (finally the stub) is used.
    """
