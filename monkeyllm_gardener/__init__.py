"""monkeyllm_gardener: the plugin-oriented ingestion framework for MonkeyLLM forests.

A third-party plugin needs only this package::

    from monkeyllm_gardener import hookimpl, Conversion
"""
from __future__ import annotations

from .conversion import Conversion, ConversionError, MediaInfo, UnsupportedFile
from .hookspecs import PROJECT_NAME, hookimpl, hookspec

__all__ = ["hookimpl", "hookspec", "PROJECT_NAME", "Conversion", "ConversionError", "MediaInfo",
           "UnsupportedFile"]
