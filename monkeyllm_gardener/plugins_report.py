"""``vine plugins`` as text: one block per plugin, then the load errors."""
from __future__ import annotations

from typing import Any, Mapping


def format_plugins_report(report: Mapping[str, Any]) -> str:
    """Plain text for the terminal: one block per plugin, then load errors."""
    lines: list[str] = []
    for plugin in report.get("plugins", []):
        lines.append(f"{plugin['name']} ({plugin['source']}, {plugin['version']})")
        if plugin.get("hooks"):
            lines.append(f"  hooks: {', '.join(plugin['hooks'])}")
        for converter in plugin.get("converters", []):
            line = (f"  converter {converter['name']}: {' '.join(converter['extensions'])}"
                    f"  priority {converter['priority']:g}")
            if not converter["available"]:
                line += f"  UNAVAILABLE ({converter['unavailable_reason']})"
            lines.append(line)
        for describer in plugin.get("describers", []):
            line = (f"  describer {describer['name']}: {' '.join(describer['kinds'])}"
                    f"  priority {describer['priority']:g}")
            if not describer["available"]:
                line += f"  UNAVAILABLE ({describer['unavailable_reason']})"
            lines.append(line)
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
