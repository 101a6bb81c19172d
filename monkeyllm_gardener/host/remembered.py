"""What a plugin host answered last time, so a run that converts nothing builds none.

Before it converts anything, a reconcile asks the host two things of a file the
catalog does not already know as unchanged: why it is unsupported (from its name
alone), and the converters' fingerprint (``failures``: a file that failed is not
converted again while the converters are the ones that failed on it). A
no-change sync asks them of its few unsupported and failed files only, and
building a host for that (pluggy, every built-in converter and its libraries,
the entry points) costs more than the rest of the sync.

So the answers are kept in ``_derived/gardener-host.json`` beside the
``environment`` they were given in, and trusted while it is unchanged:

- the host's ``HostSpec`` (command hooks and their bounds, the allow-list, ...);
- the interpreter, and what each ``sys.path`` folder holds that Python could
  import or read distributions from (its ``*.dist-info``, ``*.pth``, modules and
  package folders, by name): installing, upgrading or removing a distribution
  changes those names (a new plugin, an extra such as openpyxl);
- the files beside each built-in plugin module and of this package, with their
  mtimes and sizes (an edit of an editable install).

A host that tried a third-party entry point is never remembered: such a plugin
may register differently from one run to the next for reasons of its own (an
environment variable, a file), so each run builds that host, as before. The file
is a cache like the catalog: deleting it costs one host build.
"""
from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from monkeyllm_gardener.extensions import extension_candidates
from monkeyllm_gardener.host.spec import HostSpec

if TYPE_CHECKING:
    from monkeyllm_gardener.host.plugin_host import PluginHost

HOST_MEMORY_PATH = "_derived/gardener-host.json"


class RememberedHost:
    """The host of ``spec``, built on first need; its answers from the last run
    while the environment is unchanged. ``save`` at the end of a run."""

    def __init__(self, forest: Path, spec: HostSpec) -> None:
        self.spec = spec
        self.path = Path(forest) / HOST_MEMORY_PATH
        self._host: PluginHost | None = None
        self._rememberable = True
        self._environment = environment_key(spec)
        self._fingerprint: str | None = None
        self._unsupported: dict[str, str | None] = {}  # extension candidates -> why unsupported (None: supported)
        self._dirty = False
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return  # none yet, or damaged: the host is built when first needed
        if (isinstance(data, dict) and data.get("environment") == self._environment
                and isinstance(data.get("fingerprint"), str) and isinstance(data.get("unsupported"), dict)):
            self._fingerprint = data["fingerprint"]
            self._unsupported = {str(k): v for k, v in data["unsupported"].items() if v is None or isinstance(v, str)}

    @property
    def host(self) -> PluginHost:
        """The plugin host itself (discovery runs here, once)."""
        if self._host is None:
            from monkeyllm_gardener.failures import converters_fingerprint
            from monkeyllm_gardener.host.plugin_host import host_from_spec
            self._host = host_from_spec(self.spec)
            self._rememberable = self._host.entry_points_tried == 0
            fingerprint = converters_fingerprint(self._host.converters, self.spec)
            if fingerprint != self._fingerprint or not self._rememberable:
                # what was remembered does not hold (or may not): this host answers from now on
                self._fingerprint, self._unsupported, self._dirty = fingerprint, {}, True
        return self._host

    @property
    def fingerprint(self) -> str:
        """``failures.converters_fingerprint`` of the host."""
        if self._fingerprint is None:
            self.host  # noqa: B018 - building it sets the fingerprint
        assert self._fingerprint is not None
        return self._fingerprint

    def unsupported_reason(self, filename: str) -> str | None:
        """``PluginHost.unsupported_reason``: decided by the file's extension
        candidates alone, so one answer serves every file that offers the same."""
        key = "\n".join(extension_candidates(filename))
        if key in self._unsupported:
            return self._unsupported[key]
        reason = self.host.unsupported_reason(filename)
        self._unsupported[key] = reason
        self._dirty = True
        return reason

    @property
    def unsaved(self) -> bool:
        """Whether ``save`` would write: new answers of a host that may be remembered."""
        return self._dirty and self._rememberable and self._fingerprint is not None

    def save(self) -> None:
        """Write the answers atomically, if any are new and the host may be remembered."""
        if not self.unsaved:
            return
        self._dirty = False
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps({"environment": self._environment, "fingerprint": self._fingerprint,
                                   "unsupported": self._unsupported}, ensure_ascii=False, sort_keys=True),
                       encoding="utf-8")
        os.replace(tmp, self.path)


def environment_key(spec: HostSpec) -> str:
    """A digest of what a host built from ``spec`` depends on, read without
    importing a plugin (stats only; see the module docstring)."""
    parts: list[Any] = [repr(spec), sys.version, sys.executable]
    for entry in sys.path:
        parts.append([entry, _importable_names(entry or ".")])
    for folder in sorted(_code_folders(spec)):
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            parts.append([folder, None])
            continue
        for name in names:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                parts.append([path, st.st_mtime_ns, st.st_size])
    return hashlib.sha256(json.dumps(parts).encode("utf-8", "surrogateescape")).hexdigest()[:16]


# names in a sys.path folder that can change what imports or what distributions
# exist; anything else (a report written into the current folder) cannot
_IMPORTABLE_SUFFIXES = (".dist-info", ".egg-info", ".egg-link", ".egg", ".pth", ".py", ".pyc", ".so", ".pyd", ".zip")


def _importable_names(entry: str) -> Any:
    """The names in folder ``entry`` that can be imported or hold a distribution's
    metadata (a name without a dot may be a package folder); a zip entry's mtime."""
    try:
        names = os.listdir(entry)
    except NotADirectoryError:
        try:
            return os.stat(entry).st_mtime_ns
        except OSError:
            return None
    except OSError:
        return None
    return sorted(name for name in names if "." not in name or name.endswith(_IMPORTABLE_SUFFIXES))


def _code_folders(spec: HostSpec) -> set[str]:
    """This package's folder and the folder of each built-in plugin module."""
    folders = {os.path.dirname(os.path.abspath(__file__))}
    for module in spec.builtins:
        folder = _module_folder(module)
        if folder is not None:
            folders.add(folder)
    return folders


def _module_folder(module: str) -> str | None:
    """Where ``module``'s file is, found without running it or its parent packages
    (``importlib.util.find_spec`` would import the parents)."""
    parts = module.split(".")
    try:
        found = importlib.util.find_spec(parts[0])  # a top-level name: nothing runs
        for depth in range(2, len(parts) + 1):
            if found is None or not found.submodule_search_locations:
                return None
            found = importlib.machinery.PathFinder.find_spec(".".join(parts[:depth]),
                                                             list(found.submodule_search_locations))
    except (ImportError, ValueError):
        return None
    return os.path.dirname(found.origin) if found is not None and found.origin else None
