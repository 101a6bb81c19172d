"""``HostSpec``: a plugin host described in plain values, cheap to import.

Worker processes rebuild a host from its spec (``plugin_host.host_from_spec``),
and the pipeline holds one before it knows whether it will need a host at all
(a no-change sync needs none: ``remembered``), so this module imports neither
pluggy nor a plugin.
"""
from __future__ import annotations

from dataclasses import dataclass

from monkeyllm_gardener.command_hooks import DEFAULT_OUTPUT_LIMIT_MB
from monkeyllm_gardener.host.builtins import BUILTIN_PLUGIN_MODULES

ALLOW_LIST_ENV = "MONKEYLLM_LOAD_PLUGINS"


@dataclass(frozen=True, kw_only=True)
class HostSpec:
    """A picklable, hashable description of a host: worker processes rebuild it."""

    command_converters: tuple[tuple[str, str], ...] = ()
    command_timeout: float = 120.0
    command_output_limit_mb: float = DEFAULT_OUTPUT_LIMIT_MB
    load_entry_points: bool = True
    builtins: tuple[str, ...] = BUILTIN_PLUGIN_MODULES
    allow_list: str | None = None  # the MONKEYLLM_LOAD_PLUGINS value, None when unset
    strict: bool = False
    # import names of modules with more @hookspec functions, beside hookspecs.py
    # (a project extending the Gardener's plugin API, a test of a new hook)
    extra_hookspecs: tuple[str, ...] = ()
