"""``HostSpec``: a plugin host described in plain values, cheap to import.

Worker processes rebuild a host from its spec (``plugin_host.host_from_spec``),
and the pipeline holds one before it knows whether it will need a host at all
(a no-change sync needs none: ``remembered``), so this module imports neither
pluggy nor a plugin.
"""
from __future__ import annotations

from typing import NamedTuple

from monkeyllm_gardener.host.builtins import BUILTIN_PLUGIN_MODULES

ALLOW_LIST_ENV = "MONKEYLLM_LOAD_PLUGINS"
# what a command hook may print before it is stopped, unless the config says otherwise
# (here, not in ``command_hooks``: reading the config and describing a host must not
# import the machinery that runs the hooks)
DEFAULT_OUTPUT_LIMIT_MB = 64


class HostSpec(NamedTuple):
    """A picklable, hashable description of a host: worker processes rebuild it.
    (A NamedTuple, not a dataclass: a sync that finds nothing to do imports no dataclasses.)"""

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
