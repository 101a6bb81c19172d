"""The Gardener's plugin host: discovery, the converter and describer registries,
isolated hook calls, and the data behind ``vine plugins``.

One job per module:

- ``discovery``: which plugins load and in which order (command hooks from
  ``_meta/gardener.yaml``, the three entry-point groups, built-ins, the
  ``MONKEYLLM_LOAD_PLUGINS`` allow-list, misspelt hooks, strict mode);
  ``entry_points`` adapts the simple entry-point groups, ``builtins`` lists the
  built-in plugin modules;
- ``registry``: what the plugins register, validated and ordered (priorities,
  availability and ``requires``, the extension index);
- ``calls``: calling plugin code, one isolated call at a time and each
  implementation of any hook in discovery order, so a new hookspec needs no new
  calling code;
- ``on_curate``: the chain of ``on_curate`` hooks and the policy for their results;
- ``report``: ``vine plugins`` (its data and its text);
- ``problems``: load errors and an exception as one line;
- ``plugin_host``: ``PluginHost``, which puts them together, and the entry for
  worker processes (``host_from_spec``, ``convert_file``);
- ``spec``: ``HostSpec``, a host in plain values (no pluggy, no plugin imported);
- ``remembered``: what a host answered last time, so a run that converts nothing
  (a no-change sync) never builds one.

Everything a caller needs is importable from here, each name loaded on first use
(PEP 562): ``from monkeyllm_gardener.host import HostSpec`` imports no plugin.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from monkeyllm_core.lazy_exports import lazy_exports

# public name -> the module of this package that defines it
_EXPORTS = {
    "BUILTIN_PLUGIN_MODULES": "builtins",
    **dict.fromkeys(("PLUGIN_FAILURES", "CallOutcome", "HookCaller", "isolated"), "calls"),
    **dict.fromkeys(("COMMAND_PLUGIN_NAME", "ENTRY_POINT_GROUPS", "SOURCE_RANK", "PluginInfo", "SourceKind"),
                    "discovery"),
    **dict.fromkeys(("ALLOW_LIST_ENV", "HostSpec"), "spec"),
    **dict.fromkeys(("ConvertResult", "PluginHost", "convert_file", "host_from_spec"), "plugin_host"),
    **dict.fromkeys(("LoadError", "PluginLoadFailure"), "problems"),
    **dict.fromkeys(("BUILTIN_INSTALL_HINT", "MEDIA_KINDS", "Registered", "RegisteredConverter",
                     "RegisteredDescriber"), "registry"),
    "format_plugins_report": "report",
}

__all__ = [
    "ALLOW_LIST_ENV", "BUILTIN_INSTALL_HINT", "BUILTIN_PLUGIN_MODULES", "COMMAND_PLUGIN_NAME",
    "ENTRY_POINT_GROUPS", "MEDIA_KINDS", "PLUGIN_FAILURES", "SOURCE_RANK", "CallOutcome", "ConvertResult",
    "HookCaller", "HostSpec", "LoadError", "PluginHost", "PluginInfo", "PluginLoadFailure",
    "Registered", "RegisteredConverter", "RegisteredDescriber", "SourceKind", "convert_file",
    "format_plugins_report", "host_from_spec", "isolated",
]

if TYPE_CHECKING:
    from monkeyllm_gardener.host.builtins import BUILTIN_PLUGIN_MODULES
    from monkeyllm_gardener.host.calls import PLUGIN_FAILURES, CallOutcome, HookCaller, isolated
    from monkeyllm_gardener.host.discovery import (
        COMMAND_PLUGIN_NAME,
        ENTRY_POINT_GROUPS,
        SOURCE_RANK,
        PluginInfo,
        SourceKind,
    )
    from monkeyllm_gardener.host.plugin_host import ConvertResult, PluginHost, convert_file, host_from_spec
    from monkeyllm_gardener.host.problems import LoadError, PluginLoadFailure
    from monkeyllm_gardener.host.registry import (
        BUILTIN_INSTALL_HINT,
        MEDIA_KINDS,
        Registered,
        RegisteredConverter,
        RegisteredDescriber,
    )
    from monkeyllm_gardener.host.report import format_plugins_report
    from monkeyllm_gardener.host.spec import ALLOW_LIST_ENV, HostSpec

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
