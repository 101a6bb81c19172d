"""Public names of a package loaded on first use (PEP 562), for the package
``__init__``s of the core and the Gardener: importing a package, or one of its
modules, costs only what the caller touches, so each command imports what it runs.
"""
from __future__ import annotations

import importlib
import sys
TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (vine --help)
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, Mapping


def lazy_exports(package: str, homes: Mapping[str, str],
                 public: Iterable[str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``: ``homes`` maps each public
    name to the module of the package that defines it (relative: ``"forest.init"``);
    ``public`` is the package's ``__all__``."""
    names = sorted(public)

    def __getattr__(name: str) -> Any:
        module = homes.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        vars(sys.modules[package])[name] = value  # later lookups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *names})

    return __getattr__, __dir__
