"""monkeyllm_gardener: the plugin-oriented ingestion framework for MonkeyLLM forests.

A third-party plugin needs only this package::

    from monkeyllm_gardener import Conversion, Converter, hookimpl
    from monkeyllm_gardener.kit import detect_encoding, repair_headers, ...

The names below, ``monkeyllm_gardener.kit`` (the helpers the built-ins use) and the
hookspecs are the plugin API; everything else in the package is the Gardener's own.
They load on first use (PEP 562): importing ``monkeyllm_gardener.cli`` for
``vine --help`` must not pay for pluggy and the kit.
"""
from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (vine --help)
from monkeyllm_core.lazy_exports import lazy_exports

# public name -> the module that defines it
_EXPORTS = {
    "Conversion": "conversion", "ConversionError": "conversion", "MediaInfo": "conversion",
    "UnsupportedFile": "conversion",
    "PROJECT_NAME": "hookspecs", "hookimpl": "hookspecs", "hookspec": "hookspecs",
    "Converter": "kit.protocols", "Describer": "kit.protocols", "OptionalDependencies": "kit.protocols",
}

__all__ = ["hookimpl", "hookspec", "PROJECT_NAME", "Conversion", "ConversionError", "Converter", "Describer",
           "MediaInfo", "OptionalDependencies", "UnsupportedFile"]

if TYPE_CHECKING:
    from .conversion import Conversion, ConversionError, MediaInfo, UnsupportedFile
    from .hookspecs import PROJECT_NAME, hookimpl, hookspec
    from .kit.protocols import Converter, Describer, OptionalDependencies

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
