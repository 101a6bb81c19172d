"""Word equations (Office Math, ``m:oMath``) as LaTeX-style text.

An equation's characters sit in ``m:t`` elements, but reading them in order loses
the structure: x² and x₂ both become ``x2``. The common structures are written the
way LaTeX spells them (``\\frac{a}{b}``, ``x^{2}``, ``x_{i}``, ``\\sqrt{x}``, a sum
with its limits); anything else keeps its text in document order, so nothing an
equation says is dropped.
"""
from __future__ import annotations

from typing import Any

M = "{http://schemas.openxmlformats.org/officeDocument/2006/math}"


def _local(element: Any) -> str:
    tag = element.tag
    return tag.rpartition("}")[2] if isinstance(tag, str) else ""


def _part(element: Any, name: str) -> Any | None:
    return element.find(f"{M}{name}")


def _text(element: Any | None) -> str:
    return "" if element is None else "".join(_render(child) for child in element.iterchildren())


def _property(element: Any, props: str, name: str, default: str) -> str:
    node = element.find(f"{M}{props}/{M}{name}")
    if node is None:
        return default
    return node.get(f"{M}val", default)


def _group(text: str) -> str:
    return "{" + text + "}"


def _render(element: Any) -> str:
    tag = _local(element)
    if tag == "t":
        return element.text or ""
    if tag.endswith("Pr"):  # formatting properties (rPr, fPr, naryPr...) carry no text
        return ""
    if tag == "f":
        return "\\frac" + _group(_text(_part(element, "num"))) + _group(_text(_part(element, "den")))
    if tag in ("sSup", "sSub", "sSubSup", "sPre"):
        base = _text(_part(element, "e"))
        sub, sup = _part(element, "sub"), _part(element, "sup")
        scripts = ("_" + _group(_text(sub)) if sub is not None else "") + \
                  ("^" + _group(_text(sup)) if sup is not None else "")
        return scripts + _group(base) if tag == "sPre" else _group(base) + scripts
    if tag == "rad":
        degree = _text(_part(element, "deg"))
        return "\\sqrt" + (f"[{degree}]" if degree else "") + _group(_text(_part(element, "e")))
    if tag == "d":  # delimiters: (a, b) with the document's own brackets and separator
        begin = _property(element, "dPr", "begChr", "(")
        end = _property(element, "dPr", "endChr", ")")
        separator = _property(element, "dPr", "sepChr", "|")
        return begin + separator.join(_text(e) for e in element.findall(f"{M}e")) + end
    if tag == "nary":  # a sum, product or integral with its limits
        symbol = _property(element, "naryPr", "chr", "\u222b")
        sub, sup = _text(_part(element, "sub")), _text(_part(element, "sup"))
        limits = ("_" + _group(sub) if sub else "") + ("^" + _group(sup) if sup else "")
        return symbol + limits + " " + _text(_part(element, "e"))
    if tag == "func":
        return _text(_part(element, "fName")) + " " + _text(_part(element, "e"))
    return _text(element)


def equation_text(element: Any) -> str:
    """One ``m:oMath`` (or a whole ``m:oMathPara``) as one line of LaTeX-style text."""
    if _local(element) == "oMathPara":
        return " ".join(equation_text(math) for math in element.iter(f"{M}oMath"))
    return " ".join(_text(element).split())
