"""What ``vine plugins`` shows: the report (``--json`` prints it as it is) and
its text form, one block per plugin, then the load errors.

The report lists each plugin with its version, source and hooks, the converters
and describers it registered (extensions or kinds, priority, availability and
why not), the extension index (who converts what, in order) and every load error
(STYLE.md 7).
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from monkeyllm_gardener.host.calls import HookCaller
from monkeyllm_gardener.host.discovery import PluginInfo
from monkeyllm_gardener.host.problems import LoadError
from monkeyllm_gardener.host.registry import Registered, Registry


def plugins_report(plugins: Iterable[PluginInfo], calls: HookCaller, registry: Registry,
                   load_errors: Sequence[LoadError]) -> dict[str, Any]:
    """What ``vine plugins --json`` prints: one entry per plugin, plus load errors."""
    blocks: dict[str, dict[str, Any]] = {}
    for info in sorted(plugins, key=lambda i: i.order):
        block = blocks.setdefault(
            info.name,
            {"name": info.name, "version": info.version, "source": info.source,
             "hooks": [], "converters": [], "describers": []},
        )
        for hook_name in calls.hooks_of(info):
            if hook_name not in block["hooks"]:
                block["hooks"].append(hook_name)
    for converter in registry.converters:
        blocks[converter.plugin]["converters"].append(_entry(converter, "extensions", converter.extensions))
    for describer in registry.describers:
        blocks[describer.plugin]["describers"].append(_entry(describer, "kinds", describer.kinds))
    for block in blocks.values():
        block["hooks"].sort()
    return {
        "plugins": list(blocks.values()),
        "extensions": {ext: [r.name for r in records if r.available]
                       for ext, records in sorted(registry.extension_index.items())},
        "load_errors": [problem.as_dict() for problem in load_errors],
    }


def _entry(record: Registered, claims_key: str, claims: Sequence[str]) -> dict[str, Any]:
    """One converter or describer as the report lists it: what it claims under
    ``claims_key`` (its extensions, its kinds)."""
    return {"name": record.name, claims_key: list(claims), "priority": record.priority,
            "available": record.available, "unavailable_reason": record.unavailable_reason}


def format_plugins_report(report: Mapping[str, Any]) -> str:
    """Plain text for the terminal: one block per plugin, then load errors."""
    lines: list[str] = []
    for plugin in report.get("plugins", []):
        lines.append(f"{plugin['name']} ({plugin['source']}, {plugin['version']})")
        if plugin.get("hooks"):
            lines.append(f"  hooks: {', '.join(plugin['hooks'])}")
        lines += [_entry_line("converter", entry, entry["extensions"]) for entry in plugin.get("converters", [])]
        lines += [_entry_line("describer", entry, entry["kinds"]) for entry in plugin.get("describers", [])]
        lines.append("")
    if not report.get("plugins"):
        lines.extend(["no plugins loaded", ""])
    errors = report.get("load_errors", [])
    if errors:
        lines.append(f"load errors ({len(errors)}):")
        for problem in errors:
            lines.append(f"  {problem['plugin']} [{problem['entry_point']}]: {problem['error']}")
    else:
        lines.append("load errors: none")
    return "\n".join(lines)


def _entry_line(kind: str, entry: Mapping[str, Any], claims: Sequence[str]) -> str:
    line = f"  {kind} {entry['name']}: {' '.join(claims)}  priority {entry['priority']:g}"
    if not entry["available"]:
        line += f"  UNAVAILABLE ({entry['unavailable_reason']})"
    return line
