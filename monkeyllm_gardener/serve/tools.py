"""The calls a served forest answers, declared once for every transport.

Each ``Tool`` carries what MCP shows an agent (its name, a description saying when
to reach for it, a JSON schema whose property names are the ``Vine`` method's
parameter names, as primitives.md promises) and what REST checks a body against.
``check_args`` turns a wrong argument object into E_SCHEMA before any forest work
starts, so every transport refuses the same things with the same words.

``run`` is given the ``Vine`` the call needs: the served forest's long-lived
read-only one for a read, a writable one opened for this write alone (see
``forest_service``). ``forests``, ``view`` and ``answer`` are answered by the
host, which knows the forests, the payload files and the bound model (``answer``
is offered only when one is bound: ``serve.answer``); their entries here give
only the schema and the description.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from monkeyllm_core import Vine, VineError

STRING_OR_LIST = {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}, {"type": "null"}]}
OPTIONAL_STRING = {"anyOf": [{"type": "string"}, {"type": "null"}]}
OPTIONAL_STRINGS = {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]}
NODE_ID = {"type": "string", "description": "A node id, e.g. 'sales/exchange-policy' or 'sales/_index'."}


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    properties: dict[str, dict[str, Any]]
    required: tuple[str, ...] = ()
    writes: bool = False
    run: Callable[[Vine, dict[str, Any]], dict[str, Any]] | None = None  # None: the host answers it

    def input_schema(self) -> dict[str, Any]:
        return {"type": "object", "properties": self.properties, "required": list(self.required),
                "additionalProperties": False}


def _read(name: str, description: str, properties: dict[str, dict[str, Any]], required: tuple[str, ...],
          call: Callable[..., dict[str, Any]]) -> Tool:
    return Tool(name, description, properties, required, run=lambda vine, args: call(vine, **args))


TOOLS: dict[str, Tool] = {tool.name: tool for tool in (
    _read("locate",
          "Ranked entry points for a question, from titles, aliases, tags and summaries (not bodies). "
          "Start here when you have a question and no id. scope='branches' lands on whole regions.",
          {"query": {"type": "string", "description": "The question, as a person would type it."},
           "k": {"type": "integer", "minimum": 1, "default": 5},
           "scope": {"type": "string", "enum": ["all", "branches", "bananas"], "default": "all"},
           "type_filter": STRING_OR_LIST},
          ("query",), Vine.locate),
    _read("look",
          "The digest of one node: summary, typed edges both ways, outline, what a pick would cost; for a "
          "dataset its query manual and sample rows. Look before you pick or query.",
          {"id": NODE_ID, "fields": OPTIONAL_STRINGS}, ("id",), Vine.look),
    _read("move",
          "Follow the graph: the neighbours along typed edges (direction out, in or both), or a branch's "
          "children with rel='children'. Use scan instead to filter children by a property.",
          {"id": NODE_ID, "rel": OPTIONAL_STRING,
           "direction": {"type": "string", "enum": ["out", "in", "both"], "default": "out"}},
          ("id",), Vine.move),
    _read("scan",
          "A branch's children (or, recursive, its whole subtree) filtered by passport fields: type, tags_any, "
          "tags_all, updated_after/before, confidence_below, payload_type, source. Served from the catalog; "
          "ask for few fields to stay cheap.",
          {"parent_id": NODE_ID, "filter": {"anyOf": [{"type": "object"}, {"type": "null"}]},
           "fields": OPTIONAL_STRINGS, "recursive": {"type": "boolean", "default": False},
           "limit": {"type": "integer", "minimum": 1, "default": 50}},
          ("parent_id",), Vine.scan),
    _read("pick",
          "Read a node's body, or one section of it by header. Over 4000 tokens you get the outline and a hint "
          "instead: then pick one section.",
          {"id": NODE_ID, "section": OPTIONAL_STRING}, ("id",), Vine.pick),
    _read("sniff",
          "Literal, case- and accent-insensitive search of node bodies for 1-8 exact terms (an invoice number, "
          "a name), with the matching lines. scope narrows it to a branch's subtree or one node.",
          {"terms": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
           "scope": OPTIONAL_STRING, "k": {"type": "integer", "minimum": 1, "default": 5},
           "type_filter": STRING_OR_LIST},
          ("terms",), Vine.sniff),
    _read("query",
          "Read-only SQL over a dataset's SQLite payload, for aggregates, filters and joins over rows. "
          "look at the dataset first: its query manual names the tables and columns.",
          {"id": NODE_ID, "sql": {"type": "string", "description": "One SELECT statement."}},
          ("id", "sql"), lambda vine, id, sql: vine.query(id, sql)),  # noqa: A002 (primitives.md names)
    _read("harvest",
          "One-shot retrieval: locate and sniff fused, each result with its evidence (whole body, matched "
          "sections or outline). Use it when you will reason over the material yourself in one turn.",
          {"query": {"type": "string"}, "terms": OPTIONAL_STRINGS,
           "k": {"type": "integer", "minimum": 1, "default": 3}},
          ("query",), Vine.harvest),
    Tool("plant",
         "Create a node: id, type, title, summary, body, tags, links; a dataset declares schema and rows. "
         "Commits the file and its parent index in one commit.",
         {"node": {"type": "object", "description": "primitives.md's node object."}}, ("node",), writes=True,
         run=lambda vine, args: vine.plant(args["node"])),
    Tool("graft",
         "Edit a node: set_frontmatter, add_links, remove_links, append_section, replace_section or body. "
         "Adding a link that exists fortifies it instead.",
         {"id": NODE_ID, "patch": {"type": "object"}}, ("id", "patch"), writes=True,
         run=lambda vine, args: vine.graft(args["id"], args["patch"])),
    Tool("tend",
         "Write rows into a dataset with one INSERT, UPDATE or DELETE; the passport's payload_hash is "
         "refreshed and committed.",
         {"id": NODE_ID, "sql": {"type": "string"}}, ("id", "sql"), writes=True,
         run=lambda vine, args: vine.tend(args["id"], args["sql"])),
    _read("close_session",
          "End this hunt: success and the ids that answered it. A successful hunt warms its trail for future "
          "hunts and may suggest a shortcut to graft. The next call starts a fresh session.",
          {"success": {"type": "boolean"}, "answer_nodes": {"type": "array", "items": {"type": "string"}}},
          ("success", "answer_nodes"), Vine.close_session),
    Tool("forests",
         "The forests this server offers, with their titles: pass one as `forest` to the other tools.",
         {}),
    Tool("view",
         "An image payload (a node whose payload is an image), as an image you can see; at most 6 MiB.",
         {"id": NODE_ID}, ("id",)),
    Tool("answer",
         "Grounded prose with cited evidence from this forest's own model: a harvest, then one model call; with "
         "hops the model drives the read tools itself (never a write). The wrong tool when you have a model of "
         "your own (call harvest and reason), when the answer is an aggregate over rows (look then query, or "
         "pass hops), when each step must be auditable (drive the primitives yourself), or to write (plant, "
         "graft, tend). cache=true answers a repeated question cheaply until the forest's next commit.",
         {"question": {"type": "string", "description": "The question, as a person would ask it."},
          "k": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3,
                "description": "How many harvest results the model reads."},
          "cache": {"type": "boolean", "default": False},
          "reply_tokens": {"type": "integer", "minimum": 16, "maximum": 4000, "default": 300,
                           "description": "The most tokens the model may reply with (per turn)."},
          "hops": {"anyOf": [{"type": "integer", "minimum": 1, "maximum": 12}, {"type": "null"}],
                   "description": "Let the model make up to this many read calls itself instead of one sweep."}},
         ("question",)),
)}

_JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}


def _accepts(schema: Mapping[str, Any], value: Any) -> bool:
    if "anyOf" in schema:
        return any(_accepts(option, value) for option in schema["anyOf"])
    kind = schema.get("type")
    if kind is not None and not _JSON_TYPES[kind](value):
        return False
    if kind == "array" and "items" in schema:
        return all(_accepts(schema["items"], item) for item in value)
    return "enum" not in schema or value in schema["enum"]


def _shape(schema: Mapping[str, Any]) -> str:
    if "anyOf" in schema:
        return " or ".join(_shape(option) for option in schema["anyOf"])
    if "enum" in schema:
        return "one of " + ", ".join(map(str, schema["enum"]))
    if schema.get("type") == "array" and "items" in schema:
        return f"a list of {_shape(schema['items'])}s"
    return {"string": "a string", "integer": "an integer", "number": "a number", "boolean": "true or false",
            "object": "an object", "null": "null"}.get(schema.get("type", ""), "anything")


def check_args(tool: Tool, args: Any) -> dict[str, Any]:
    """The argument object, checked against the tool's schema (E_SCHEMA otherwise)."""
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise VineError("E_SCHEMA", f"{tool.name}: the arguments must be a JSON object, not {type(args).__name__}",
                        f"e.g. {{{', '.join(repr(r) + ': ...' for r in tool.required)}}}")
    unknown = sorted(set(args) - set(tool.properties))
    if unknown:
        accepted = ", ".join(tool.properties) or "none"
        raise VineError("E_SCHEMA", f"{tool.name}: unknown argument {', '.join(map(repr, unknown))}",
                        f"{tool.name} takes: {accepted}.")
    missing = [name for name in tool.required if name not in args]
    if missing:
        raise VineError("E_SCHEMA", f"{tool.name}: missing argument {', '.join(map(repr, missing))}",
                        f"{tool.name} needs: {', '.join(tool.required)}.")
    for name, value in args.items():
        schema = tool.properties[name]
        if not _accepts(schema, value):
            raise VineError("E_SCHEMA", f"{tool.name}: {name} must be {_shape(schema)}, not {value!r:.80}",
                            f"See the {tool.name} tool's schema.")
    return dict(args)
