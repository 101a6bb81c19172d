"""monkeyllm_gardener: the plugin-oriented ingestion framework for MonkeyLLM forests.

A third-party plugin needs only this package::

    from monkeyllm_gardener import Conversion, Converter, hookimpl
    from monkeyllm_gardener.kit import detect_encoding, repair_headers, ...

The names below, ``monkeyllm_gardener.kit`` (the helpers the built-ins use) and the
hookspecs are the plugin API; everything else in the package is the Gardener's own.
"""
from __future__ import annotations

from .conversion import Conversion, ConversionError, MediaInfo, UnsupportedFile
from .hookspecs import PROJECT_NAME, hookimpl, hookspec
from .kit.protocols import Converter, Describer, OptionalDependencies

__all__ = ["hookimpl", "hookspec", "PROJECT_NAME", "Conversion", "ConversionError", "Converter", "Describer",
           "MediaInfo", "OptionalDependencies", "UnsupportedFile"]
