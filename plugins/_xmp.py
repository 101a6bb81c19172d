"""An image's XMP packet, found and parsed safely with the standard library.

Pillow leaves the packet's bytes in ``image.info`` (JPEG APP1, PNG iTXt
``XML:com.adobe.xmp``, WebP, TIFF); ``Image.getxmp()`` would need defusedxml, which
is not a dependency. So the packet is parsed with ``xml.etree`` under two rules:

- at most ``MAX_XMP_BYTES``: real packets are a few KB (with padding); a larger one
  is refused rather than parsed;
- no DTD (``<!DOCTYPE`` or ``<!ENTITY`` anywhere in it): XMP never needs one, and a
  DTD is how entity bombs ("billion laughs") and external entities get into XML.

Only the ``<x:xmpmeta>`` element (or a bare ``<rdf:RDF>``, which some writers emit)
is parsed: the ``<?xpacket?>`` wrapper and its padding are not XML content.
A refusal appends one note (our words, never the packet's) to ``notes``.
"""
from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from typing import Any

MAX_XMP_BYTES = 1_048_576

NAMESPACES = {
    "x": "adobe:ns:meta/",
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "dc": "http://purl.org/dc/elements/1.1/",
    "xmp": "http://ns.adobe.com/xap/1.0/",
    "photoshop": "http://ns.adobe.com/photoshop/1.0/",
    "exif": "http://ns.adobe.com/exif/1.0/",
}
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
_ENVELOPES = ((b"<x:xmpmeta", b"</x:xmpmeta>"), (b"<rdf:RDF", b"</rdf:RDF>"))


def xmp_packet(image: Any) -> bytes | None:
    """The packet's bytes, or None when the image has none."""
    # Pillow 11+ puts every format's packet in info["xmp"]; older ones keep PNG's
    # iTXt chunk under its keyword.
    for key in ("xmp", "XML:com.adobe.xmp"):
        value = image.info.get(key)
        if isinstance(value, str):
            value = value.encode("utf-8")
        if isinstance(value, bytes) and value.strip(b"\x00 \r\n\t"):
            return value
    return None


def parse_xmp(packet: bytes, notes: list[str]) -> ElementTree.Element | None:
    """The packet's root element, or None (with a note) when it is refused or broken."""
    if len(packet) > MAX_XMP_BYTES:
        notes.append(f"XMP: the packet is {len(packet)} bytes, over the limit of {MAX_XMP_BYTES}")
        return None
    if b"<!DOCTYPE" in packet or b"<!ENTITY" in packet:
        notes.append("XMP: the packet declares a DTD or entities, so it was not parsed")
        return None
    for start_tag, end_tag in _ENVELOPES:
        start, end = packet.find(start_tag), packet.rfind(end_tag)
        if 0 <= start < end:
            try:
                return ElementTree.fromstring(packet[start : end + len(end_tag)])
            except ElementTree.ParseError:
                notes.append("XMP: the packet is not well-formed XML")
                return None
    notes.append("XMP: no xmpmeta packet found")
    return None


def rdf_descriptions(root: ElementTree.Element) -> list[ElementTree.Element]:
    return list(root.iter(qualified("rdf:Description")))


def xmp_values(descriptions: list[ElementTree.Element], prop: str) -> list[str]:
    """A property's values (``prop`` as ``dc:title``) from the first rdf:Description
    carrying it: as an attribute, as a simple element, or as the rdf:li items of an
    Alt/Seq/Bag, an Alt's ``x-default`` item first."""
    name = qualified(prop)
    for description in descriptions:
        if description.get(name) is not None:
            return [description.get(name)]
        element = description.find(name)
        if element is None:
            continue
        items = element.findall(f"*/{qualified('rdf:li')}")
        if not items:
            return [element.text] if element.text and element.text.strip() else []
        items.sort(key=lambda item: item.get(_XML_LANG) != "x-default")  # stable: x-default first
        return [item.text for item in items if item.text and item.text.strip()]
    return []


def qualified(prefixed: str) -> str:
    """``dc:title`` -> ``{http://purl.org/dc/elements/1.1/}title``, as etree names it."""
    prefix, local = prefixed.split(":", 1)
    return f"{{{NAMESPACES[prefix]}}}{local}"
