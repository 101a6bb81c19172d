"""What a converter and a describer are: the objects a plugin registers.

The host takes any object with the right attributes (duck typing, as pluggy
plugins are modules with the right functions): these protocols write that shape
down, for a type checker and for ``isinstance`` (they are ``runtime_checkable``,
which checks that the attributes exist, not their types or behaviour). A
converter need not inherit from ``Converter``; the built-ins do not.

The full contracts (choice among claimants, fallbacks, what raising does) are in
``monkeyllm_gardener.hookspecs``: ``register_converters`` and
``register_describers``. Attributes are read-only properties here so that a
plain class attribute (``extensions = (".pdf",)``) satisfies them.
"""
from __future__ import annotations

from pathlib import Path
from typing import Collection, Protocol, Sequence, runtime_checkable

from monkeyllm_gardener.conversion import Conversion, MediaInfo

__all__ = ["Converter", "Describer", "OptionalDependencies"]


@runtime_checkable
class Converter(Protocol):
    """Turns one source file into a ``Conversion``, registered with
    ``register(converter, priority=0.0)`` from a ``register_converters`` hook.

    A converter that needs a module beyond the base install also has the two
    attributes of ``OptionalDependencies`` (``requires``, ``install_hint``); without
    them it is always available.
    """

    @property
    def name(self) -> str:
        """Unique among converters; shown in the run report and ``vine plugins``."""
        ...

    @property
    def extensions(self) -> Sequence[str]:
        """The extensions it claims: lowercase, with the dot (``".csv"``)."""
        ...

    def convert(self, path: Path) -> Conversion:
        """The file at ``path`` as a ``Conversion``. Pure: no forest access (it may run
        in a worker process or on another machine), nothing written beside the
        source. Raise ``ConversionError`` (one line, no file content) to fail this
        one file; the next claimant of the extension is tried."""
        ...


@runtime_checkable
class Describer(Protocol):
    """Writes the description of an image or audio file, registered with
    ``register(describer, priority=0.0)`` from a ``register_describers`` hook.
    May also have the attributes of ``OptionalDependencies``."""

    @property
    def name(self) -> str:
        """Unique among describers; named in the warning when it fails."""
        ...

    @property
    def kinds(self) -> Collection[str]:
        """The media it describes: a non-empty subset of ``{"image", "audio"}``."""
        ...

    def describe(self, path: Path, info: MediaInfo) -> str | None:
        """Markdown describing the file (what it shows, any legible text), or None to
        pass to the next describer. Raising is a warning; the next describer (at
        last the built-in stub) is used."""
        ...


@runtime_checkable
class OptionalDependencies(Protocol):
    """What a converter or describer needing optional modules declares: when one of
    ``requires`` cannot be imported it is *unavailable*, its files land in
    ``unsupported`` with ``install_hint``, and nothing crashes."""

    @property
    def requires(self) -> Sequence[str]:
        """Importable module names (``("pypdf",)``), looked up (``importlib.util.find_spec``)
        when it registers, not imported."""
        ...

    @property
    def install_hint(self) -> str:
        """How to install them, shown to the user (``pip install pypdf``)."""
        ...
