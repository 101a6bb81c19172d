"""`vine serve`'s own stdio transport, byte by byte: the real command as a subprocess,
JSON-RPC written to its stdin exactly as each case needs (one huge line, two
messages in one write, one message over two writes, lines that are no message),
and what comes back on its stdout read line by line."""
from __future__ import annotations

import json
import os
import select
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from mcp_types.version import LATEST_HANDSHAKE_VERSION

from _mcp_helpers import STARTUP_SECONDS, VINE
from monkeyllm_gardener.curator.testing_server import ScriptedOpenAIServer, chat_completion


INITIALIZE = (json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": LATEST_HANDSHAKE_VERSION, "capabilities": {},
    "clientInfo": {"name": "test", "version": "1"}}}) + "\n").encode()


class PipedServer:
    """`vine serve --forest DIR` on raw pipes, after the MCP handshake."""

    def __init__(self, forest: Path, log: Path, env: dict[str, str] | None = None, stdin: Any = subprocess.PIPE):
        self.log = log
        with open(log, "w", encoding="utf-8") as stderr:
            self.process = subprocess.Popen([VINE, "serve", "--forest", str(forest)], stdin=stdin,
                                            stdout=subprocess.PIPE, stderr=stderr, bufsize=0,
                                            env={**os.environ, **(env or {})})
        self._pending = b""
        if stdin is subprocess.PIPE:
            self.write(INITIALIZE)
            assert self.answer()["id"] == 0
            self.write(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def write(self, data: bytes) -> None:
        """One write on the pipe, as given."""
        assert self.process.stdin is not None
        written = 0
        while written < len(data):
            written += os.write(self.process.stdin.fileno(), data[written:])

    def answer(self, timeout: float = STARTUP_SECONDS) -> dict[str, Any]:
        """The next line on stdout, parsed (every line there must be JSON-RPC)."""
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while b"\n" not in self._pending:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.process.stdout], [], [], max(left, 0))
            if not ready:
                raise AssertionError(f"no answer in {timeout} s; the server said: {self.log.read_text()}")
            chunk = os.read(self.process.stdout.fileno(), 1 << 20)
            if not chunk:
                raise AssertionError(f"stdout closed; the server said: {self.log.read_text()}")
            self._pending += chunk
        line, self._pending = self._pending.split(b"\n", 1)
        message = json.loads(line)
        assert message["jsonrpc"] == "2.0", message
        return message

    def close(self) -> tuple[int, bytes]:
        """EOF on stdin; the server's exit code and whatever else it wrote on stdout."""
        if self.process.stdin is not None:
            self.process.stdin.close()
            self.process.stdin = None  # communicate() would flush it
        rest, _ = self.process.communicate(timeout=STARTUP_SECONDS)
        return self.process.returncode, self._pending + rest


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _call(request_id: int, name: str, arguments: dict[str, Any]) -> bytes:
    return _line({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                  "params": {"name": name, "arguments": arguments}})


def _tool_answer(message: dict[str, Any]) -> Any:
    assert "result" in message and not message["result"]["isError"], message
    return json.loads(message["result"]["content"][0]["text"])


@pytest.fixture
def served(served_forest, tmp_path):
    server = PipedServer(served_forest, tmp_path / "serve.log")
    yield server
    if server.process.poll() is None:
        server.process.kill()
        server.process.wait()


def test_a_line_over_1_mib_is_read_whole_and_answered(served, served_forest):
    body = "Okapi sightings by the river, one per line.\n" * 26_000  # 1.1 MiB
    request = _call(1, "plant", {"node": {"id": "people/okapi-log", "type": "entity", "parent": "people/_index",
                                          "title": "Okapi log", "summary": "Every okapi seen.", "body": body}})
    assert len(request) > 1 << 20
    served.write(request)
    planted = served.answer()
    assert planted["id"] == 1 and _tool_answer(planted)["id"] == "people/okapi-log"
    assert body in (served_forest / "people" / "okapi-log.md").read_text(encoding="utf-8")


def test_two_requests_in_one_write_get_two_answers(served):
    served.write(_call(1, "look", {"id": "sales/exchange-policy", "fields": ["title"]})
                 + _call(2, "look", {"id": "sales/orders-2026", "fields": ["title"]}))
    answers = {message["id"]: _tool_answer(message) for message in (served.answer(), served.answer())}
    assert answers == {1: {"id": "sales/exchange-policy", "title": "Exchange policy"},
                       2: {"id": "sales/orders-2026", "title": "Orders 2026"}}


def test_a_request_split_over_writes_is_one_request(served):
    request = _call(1, "look", {"id": "sales/exchange-policy", "fields": ["title"]})
    served.write(request[:17])
    time.sleep(0.3)  # the first part has surely been read on its own
    served.write(request[17:-1])
    time.sleep(0.3)
    served.write(request[-1:])  # the newline ends it
    assert _tool_answer(served.answer()) == {"id": "sales/exchange-policy", "title": "Exchange policy"}


def test_eof_ends_the_server_cleanly_with_nothing_but_protocol_on_stdout(served):
    served.write(_call(1, "forests", {}))
    assert _tool_answer(served.answer())["forests"][0]["name"] == "acme"
    code, rest = served.close()
    said = served.log.read_text(encoding="utf-8")
    assert code == 0 and rest == b"", said
    assert said.splitlines() == ["vine serve: serving the forest acme over MCP stdio", "vine serve: stopped"]


def test_lines_that_are_no_message_get_json_rpc_errors_and_the_server_goes_on(served):
    served.write(b"\xff\xfe not UTF-8, not JSON\n")
    not_json = served.answer()
    served.write(b"{\"id\": 5, \"method\": 3}\n")  # JSON, but no JSON-RPC message
    not_a_message = served.answer()
    served.write(b"\n   \n")  # blank lines carry nothing and get nothing
    served.write(_call(6, "look", {"id": "sales/exchange-policy", "fields": ["title"]}))
    after = served.answer()
    assert not_json["id"] is None and not_json["error"]["code"] == -32700
    assert not_json["error"]["message"].startswith("Parse error")
    assert not_a_message["id"] == 5 and not_a_message["error"]["code"] == -32600
    assert after["id"] == 6 and _tool_answer(after) == {"id": "sales/exchange-policy", "title": "Exchange policy"}


def test_a_slow_call_does_not_hold_a_fast_one_sent_after_it(served_forest, tmp_path):
    reply = chat_completion(json.dumps({"answer": "Retail returns close 30 days after the invoice date.",
                                        "evidence": ["sales/exchange-policy"]}))
    with ScriptedOpenAIServer(default_reply=reply, delay=3.0) as model:
        server = PipedServer(served_forest, tmp_path / "serve.log", env={
            "MONKEYLLM_LLM_ENDPOINT": model.base_url, "MONKEYLLM_LLM_MODEL": "scripted-model"})
        try:
            server.write(_call(1, "answer", {"question": "what is the deadline to exchange?"}))
            server.write(_call(2, "look", {"id": "sales/exchange-policy", "fields": ["title"]}))
            first, second = server.answer(), server.answer()
            assert server.close()[0] == 0
        finally:
            if server.process.poll() is None:
                server.process.kill()
    assert first["id"] == 2 and _tool_answer(first)["title"] == "Exchange policy"  # while the model thought
    assert second["id"] == 1 and _tool_answer(second)["answer"].startswith("Retail returns close 30 days")


def test_stdin_from_a_regular_file_is_served_by_the_sdks_transport(served_forest, tmp_path):
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(INITIALIZE)
    with open(requests, "rb") as stdin:  # an event loop cannot watch a regular file
        server = PipedServer(served_forest, tmp_path / "serve.log", stdin=stdin)
        # initialize is answered before the next line is read; the file's EOF then ends the server
        # (and, as ever, cancels what is still in flight: a client that is gone gets no answers)
        answered = server.answer()
        code, rest = server.close()
    assert answered["id"] == 0 and answered["result"]["serverInfo"]["name"] == "monkeyllm"
    assert code == 0 and rest == b"", server.log.read_text(encoding="utf-8")


def _initialize_over(sock: Any) -> dict[str, Any]:
    sock.sendall(INITIALIZE)
    sock.settimeout(STARTUP_SECONDS)
    received = b""
    while b"\n" not in received:
        chunk = sock.recv(1 << 16)
        assert chunk, "the server closed the socket without answering"
        received += chunk
    return json.loads(received.split(b"\n", 1)[0])


def test_one_socket_for_stdin_and_stdout_is_answered(served_forest, tmp_path):
    """inetd, socat EXEC: and systemd socket units hand the server one socket as fd 0
    and fd 1: its answers must come back on it (an event-loop write transport on
    that socket would read the requests as the peer closing, and drop every answer)."""
    import socket

    ours, theirs = socket.socketpair()
    with open(tmp_path / "serve.log", "w", encoding="utf-8") as stderr:
        process = subprocess.Popen([VINE, "serve", "--forest", str(served_forest)], stdin=theirs, stdout=theirs,
                                   stderr=stderr)
    theirs.close()
    try:
        answered = _initialize_over(ours)
        assert answered["id"] == 0 and answered["result"]["serverInfo"]["name"] == "monkeyllm"
        ours.shutdown(socket.SHUT_WR)  # EOF: the server ends
        assert process.wait(timeout=STARTUP_SECONDS) == 0, (tmp_path / "serve.log").read_text(encoding="utf-8")
    finally:
        ours.close()
        if process.poll() is None:
            process.kill()
            process.wait()


def test_stdout_shared_with_stderr_is_served(served_forest):
    """`vine serve ... 2>&1`: stderr is the protocol's pipe, so the loop must not make
    it non-blocking under the logger (the SDK's transport serves it)."""
    process = subprocess.Popen([VINE, "serve", "--forest", str(served_forest)], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, bufsize=0)
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(INITIALIZE)
        seen, deadline = b"", time.monotonic() + STARTUP_SECONDS
        while b'"id":0' not in seen.replace(b" ", b""):
            ready, _, _ = select.select([process.stdout], [], [], max(deadline - time.monotonic(), 0))
            assert ready, f"no answer: {seen!r}"
            seen += os.read(process.stdout.fileno(), 1 << 16)
        # with 2>&1 the log's lines share the pipe (the operator's choice); the answer is one line
        answers = [json.loads(line) for line in seen.splitlines() if line.startswith(b"{")]
        assert [a["id"] for a in answers] == [0], seen
        process.stdin.close()
        assert process.wait(timeout=STARTUP_SECONDS) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
