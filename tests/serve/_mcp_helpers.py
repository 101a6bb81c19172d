"""What the MCP tests share: the real `vine serve` command as a subprocess, the SDK's
client, and reading a tool result the way an agent does."""
from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import anyio
from mcp import StdioServerParameters
from mcp_types import CallToolResult

VINE = str(Path(sys.executable).parent / "vine")
STARTUP_SECONDS = 60  # a cold interpreter on a loaded 2-core machine
URL_LINE = re.compile(r"at (http://\S+/mcp)")


def stdio_server(*args: str) -> StdioServerParameters:
    """`vine serve ARGS` over stdio, with this test run's environment (git identity, HOME)."""
    return StdioServerParameters(command=VINE, args=["serve", *args], env=dict(os.environ))


def run(async_test: Any) -> Any:
    return anyio.run(async_test)


def answer_of(result: CallToolResult) -> Any:
    """The JSON an agent reads: the one text block of a tool result."""
    assert len(result.content) == 1 and result.content[0].type == "text", result.content
    return json.loads(result.content[0].text)


def error_of(result: CallToolResult) -> dict[str, Any]:
    assert result.is_error, result.content
    envelope = answer_of(result)
    assert set(envelope) == {"error"} and set(envelope["error"]) == {"code", "message", "hint"}
    return envelope["error"]


@contextlib.contextmanager
def http_server(log: Path, *args: str) -> Iterator[str]:
    """`vine serve --transport http --port 0 ARGS` as a subprocess; yields the MCP URL it
    printed. At exit it is stopped with SIGTERM and must shut down cleanly (exit 0)."""
    with open(log, "w", encoding="utf-8") as stderr:
        process = subprocess.Popen([VINE, "serve", "--transport", "http", "--port", "0", *args],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr)
    try:
        yield _wait_for_url(process, log)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            out, _ = process.communicate(timeout=STARTUP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
    said = log.read_text(encoding="utf-8")
    assert process.returncode == 0, said
    assert said.rstrip().endswith("vine serve: stopped") and out == b"", said


def _wait_for_url(process: subprocess.Popen, log: Path) -> str:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        found = URL_LINE.search(log.read_text(encoding="utf-8"))
        if found:
            return found.group(1)
        if process.poll() is not None:
            raise AssertionError(f"vine serve exited {process.returncode}: {log.read_text(encoding='utf-8')}")
        time.sleep(0.05)
    process.kill()
    raise AssertionError(f"vine serve printed no URL in {STARTUP_SECONDS} s: {log.read_text(encoding='utf-8')}")
