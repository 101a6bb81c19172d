"""``vine keys add | list | revoke``: the bearer keys of ``vine serve`` over HTTP.

The store is ``$MONKEYLLM_HOME/keys.json`` (default ``~/.config/monkeyllm/``),
outside every forest, and holds only hashes (``serve.keys``). ``add`` prints the
new key once, alone on stdout so a script can capture it
(``KEY=$(vine keys add ana)``); what it is for, and that it is not shown
again, goes to stderr. A running server re-reads the store when it changes, so a
revoke takes effect on its next request.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any


EXIT_OK = 0


def keys_arguments(keys: argparse.ArgumentParser, forest_arg: Any, forest_of: Any) -> None:
    """The verbs of ``vine keys`` and their arguments (``cli.COMMANDS``); no forest: keys are the server's."""
    commands = keys.add_subparsers(dest="keys_command", required=True)

    def command(name: str, help_text: str, func: Any) -> argparse.ArgumentParser:
        p = commands.add_parser(name, help=help_text)
        p.add_argument("--json", action="store_true", help="print the result as JSON")
        p.add_argument("--traceback", action="store_true", default=argparse.SUPPRESS,
                       help="re-raise errors with a traceback")
        p.set_defaults(func=func)
        return p

    p = command("add", "make a key; it is printed once and only its hash is kept", cmd_keys_add)
    p.add_argument("name", help="who the key is for: 1-64 letters, digits, '.', '_' or '-'")
    p.add_argument("--forest", help="the only forest the key may reach (its name, as `vine serve` lists it)")
    p.add_argument("--read-only", action="store_true", help="the key may read but never write")

    command("list", "the keys (names, scopes, fingerprints; never the keys)", cmd_keys_list)

    p = command("revoke", "delete a key: requests with it are refused from then on", cmd_keys_revoke)
    p.add_argument("name")


def _store() -> Any:
    from .serve.keys import KeyStore
    return KeyStore()


def _scope(forest: str | None, read_only: bool) -> str:
    where = f"the forest {forest!r} only" if forest else "every forest"
    return f"{where}, {'reads only' if read_only else 'reads and writes'}"


def cmd_keys_add(args: argparse.Namespace) -> int:
    store = _store()
    key = store.add(args.name, forest=args.forest, read_only=args.read_only)
    if args.json:
        _out(_wire({"name": args.name, "key": key, "forest": args.forest, "read_only": args.read_only,
                   "store": str(store.path), "shown_once": True}))
        return EXIT_OK
    _out(key)
    sys.stderr.write(f"key {args.name!r} for {_scope(args.forest, args.read_only)}, stored hashed in {store.path}.\n"
                     "It is not shown again: keep it now. Callers send it as `Authorization: Bearer KEY`.\n")
    return EXIT_OK


def cmd_keys_list(args: argparse.Namespace) -> int:
    store = _store()
    keys = store.list()
    if args.json:
        _out(_wire({"store": str(store.path), "keys": keys}))
        return EXIT_OK
    for key in keys:
        _out(f"{key['name']}  {_scope(key['forest'], key['read_only'])}  created {key['created']}  "
             f"sha256 {key['fingerprint']}")
    _out(f"({len(keys)} key(s) in {store.path})" if keys else
         f"no keys in {store.path}: `vine serve --transport http` answers loopback callers only; "
         "add one with `vine keys add NAME`")
    return EXIT_OK


def cmd_keys_revoke(args: argparse.Namespace) -> int:
    store = _store()
    store.revoke(args.name)
    if args.json:
        _out(_wire({"revoked": args.name, "store": str(store.path)}))
    else:
        _out(f"key {args.name!r} revoked: a running server refuses it from its next request on")
    return EXIT_OK


def _out(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _wire(response: Any) -> str:
    # imported here, not at the top, so `vine --help` loads none of the engine;
    # contract is json and the errors module alone
    from monkeyllm_core.read.contract import wire
    return wire(response)
