"""`vine keys` through the real CLI, the key store's file, and the bind rule."""
from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from monkeyllm_core import VineError
from monkeyllm_gardener.serve.auth import check_bind, is_loopback
from monkeyllm_gardener.serve.keys import KeyStore, default_keys_path
from monkeyllm_gardener.serve.principal import Principal
from monkeyllm_gardener.testing import isolated_env


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def vine(home: Path, *args: str, monkeyllm_home: bool = True) -> subprocess.CompletedProcess:
    extra = {"MONKEYLLM_HOME": str(home / "monkeyllm")} if monkeyllm_home else {}
    return subprocess.run([sys.executable, "-m", "monkeyllm_gardener.cli", *args], env=isolated_env(home, extra),
                          capture_output=True, text=True, timeout=60)


def keys_file(home: Path) -> Path:
    return home / "monkeyllm" / "keys.json"


def test_add_prints_the_key_once_and_stores_only_its_hash(home):
    done = vine(home, "keys", "add", "ana", "--forest", "acme", "--read-only")
    assert done.returncode == 0, done.stderr
    key = done.stdout.strip()
    assert key.startswith("mk_") and len(key) >= 40 and done.stdout.count("\n") == 1  # stdout: the key alone
    assert "not shown again" in done.stderr and "the forest 'acme' only, reads only" in done.stderr
    text = keys_file(home).read_text(encoding="utf-8")
    assert key not in text and key[3:] not in text and key[3:20] not in text
    assert stat.S_IMODE(keys_file(home).stat().st_mode) == 0o600
    assert stat.S_IMODE(keys_file(home).parent.stat().st_mode) == 0o700

    listed = vine(home, "keys", "list", "--json")
    document = json.loads(listed.stdout)
    assert document["store"] == str(keys_file(home))
    [entry] = document["keys"]
    assert {k: entry[k] for k in ("name", "forest", "read_only")} == {"name": "ana", "forest": "acme", "read_only": True}
    assert key not in listed.stdout and key[3:15] not in listed.stdout
    text_list = vine(home, "keys", "list").stdout
    assert "ana  the forest 'acme' only, reads only" in text_list and key not in text_list

    assert KeyStore(keys_file(home)).resolve(key) == Principal("ana", "acme", True)
    assert KeyStore(keys_file(home)).resolve(key + "x") is None
    assert KeyStore(keys_file(home)).resolve("") is None


def test_add_json_and_the_default_store_under_home(home):
    done = vine(home, "keys", "add", "ci-bot", "--json", monkeyllm_home=False)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    path = home / ".config" / "monkeyllm" / "keys.json"
    assert answer["store"] == str(path) and answer["shown_once"] is True
    assert KeyStore(path).resolve(answer["key"]) == Principal("ci-bot", None, False)
    assert default_keys_path({"HOME": str(home)}) == path
    assert default_keys_path({"HOME": str(home), "MONKEYLLM_HOME": "/x"}) == Path("/x/keys.json")


@pytest.mark.parametrize("args, line", [
    (("keys", "add", "ana"), "error E_EXISTS: a key named 'ana' exists already (Pick another name, or "
                             "`vine keys revoke ana` first.)"),
    (("keys", "add", "../ana"), "error E_SCHEMA: '../ana' is not a key name (Use 1-64 letters, digits, '.', '_' "
                                "or '-', starting with a letter or digit.)"),
    (("keys", "add", "bob", "--forest", "./brain"), "error E_SCHEMA: --forest './brain' is not a forest name"),
    (("keys", "revoke", "zed"), "error E_NOT_FOUND: no key named 'zed' (Keys: ana (`vine keys list`).)"),
])
def test_wrong_key_commands_are_one_line_errors_and_change_nothing(home, args, line):
    assert vine(home, "keys", "add", "ana").returncode == 0
    before = keys_file(home).read_bytes()
    done = vine(home, *args)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(line) and done.stderr.count("\n") == 1
    assert keys_file(home).read_bytes() == before


def test_revoke_removes_the_key(home):
    ana = vine(home, "keys", "add", "ana").stdout.strip()
    bob = vine(home, "keys", "add", "bob").stdout.strip()
    done = vine(home, "keys", "revoke", "ana")
    assert done.returncode == 0 and "revoked" in done.stdout
    store = KeyStore(keys_file(home))
    assert store.resolve(ana) is None and store.resolve(bob) == Principal("bob")
    assert [k["name"] for k in store.list()] == ["bob"]


def test_keys_added_at_the_same_time_are_all_kept(home):
    names = [f"agent-{n}" for n in range(6)]
    env = isolated_env(home, {"MONKEYLLM_HOME": str(home / "monkeyllm")})
    running = [subprocess.Popen([sys.executable, "-m", "monkeyllm_gardener.cli", "keys", "add", name], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for name in names]
    keys = {name: proc.communicate(timeout=60)[0].strip() for name, proc in zip(names, running)}
    store = KeyStore(keys_file(home))
    assert all(store.resolve(key) == Principal(name) for name, key in keys.items())


@pytest.mark.parametrize("content, problem", [
    ('{"version": 1, "keys": ', "not JSON (Expecting value at line 1)"),
    ("[]", "not a version 1 key store"),
    ('{"version": 1, "keys": {"ana": {"sha256": "abc", "forest": null, "read_only": false}}}',
     "the entry for 'ana' is not a key record"),
    ("", "not JSON"),
])
def test_a_corrupt_store_is_an_error_naming_the_file_never_no_keys(home, content, problem):
    keys_file(home).parent.mkdir(parents=True)
    keys_file(home).write_text(content, encoding="utf-8")
    for args in (("keys", "list"), ("keys", "add", "bob"), ("keys", "revoke", "ana")):
        done = vine(home, *args)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, args
        assert done.stderr.startswith(f"error E_KEYS: the key store {keys_file(home)} cannot be read: {problem}")
        assert "Fix or delete that file" in done.stderr
    with pytest.raises(VineError) as caught:
        KeyStore(keys_file(home)).resolve("mk_anything")
    assert caught.value.code == "E_KEYS"
    assert keys_file(home).read_text(encoding="utf-8") == content


def test_a_changed_store_is_seen_without_a_restart(home):
    store = KeyStore(keys_file(home))
    assert not store.current()
    ana = KeyStore(keys_file(home)).add("ana")  # another process's view of the same file
    assert store.resolve(ana) == Principal("ana")
    KeyStore(keys_file(home)).revoke("ana")
    assert store.resolve(ana) is None and not store.current()


@pytest.mark.parametrize("host, loopback", [
    ("127.0.0.1", True), ("127.8.9.10", True), ("::1", True), ("[::1]", True), ("localhost", True),
    ("LOCALHOST", True), ("0.0.0.0", False), ("::", False), ("", False), ("192.168.1.20", False),
    ("example.com", False), ("localhost.example.com", False),
])
def test_which_hosts_are_loopback(host, loopback):
    assert is_loopback(host) is loopback


def test_binding_beyond_loopback_needs_a_key(home):
    store = KeyStore(keys_file(home))
    check_bind("127.0.0.1", store)  # loopback: no key needed
    with pytest.raises(VineError) as caught:
        check_bind("0.0.0.0", store)
    assert caught.value.code == "E_KEYS" and "vine keys add" in caught.value.one_line()
    assert caught.value.one_line().count("\n") == 0
    store.add("ops")
    check_bind("0.0.0.0", store)
