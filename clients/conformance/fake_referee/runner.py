"""Replays transcripts: a scripted PlayService per transcript, the kit's bot as a subprocess.

For each transcript the fake referee listens on a fresh loopback port (plaintext or TLS),
starts the kit's conformance bot with the address, the token and the transcript's bot
script in its environment, and plays the transcript's streams in order: ``send`` steps
are written to the bot, ``recv`` steps check what the bot sends (and when), ``silence``
steps check that it sends nothing. Then the bot's exit code is checked.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime
import json
import os
import queue
import re
import shlex
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import json_format

from fake_referee._proto.pusoy.referee.v1 import play_service_pb2 as play_service
from fake_referee._proto.pusoy.referee.v1 import play_service_pb2_grpc as play_service_grpc

HERE = Path(__file__).resolve().parent.parent
TRANSCRIPTS = HERE / "transcripts"
TLS_DIR = HERE / "tls"
TOKEN = "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00"
NOW_RE = re.compile(r"^\$NOW([+-]\d+)ms$")
DEFAULT_RECV_MS = 2000
DEFAULT_TIMEOUT_MS = 20000


class Mismatch(Exception):
    """The bot did something the transcript does not allow."""


# -- transcripts ---------------------------------------------------------------------------


@dataclasses.dataclass
class Transcript:
    path: Path
    data: dict[str, Any]

    @property
    def name(self) -> str:
        return self.path.stem

    @property
    def streams(self) -> list[dict[str, Any]]:
        return list(self.data.get("streams", []))

    def requires(self) -> list[str]:
        return list(self.data.get("requires", []))

    @property
    def timed(self) -> bool:
        """Whether it checks times closely: such transcripts run alone, not in parallel."""

        def tight(step: dict[str, Any]) -> bool:
            return "after_ms" in step or "silence_ms" in step or step.get("within_ms", 2000) < 1500

        return any(tight(step) for s in self.streams for step in s.get("steps", []))


def load(paths: list[Path]) -> list[Transcript]:
    out = []
    for p in paths:
        files = sorted(p.glob("*.json")) if p.is_dir() else [p]
        for f in files:
            out.append(Transcript(f, json.loads(f.read_text())))
    return out


def fragments() -> dict[str, Any]:
    return dict(json.loads((HERE / "fragments.json").read_text()))


FRAGMENTS = fragments()


def merged(base: Any, over: Any) -> Any:
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for k, v in over.items():
            out[k] = merged(base.get(k), v)
        return out
    return over


def resolve(value: Any) -> Any:
    """``"@name"`` is the message ``name`` of fragments.json; ``{"@": name, ...}`` is that
    message with the other keys merged over it (objects deeply, anything else replaced)."""
    if isinstance(value, str) and value.startswith("@"):
        return resolve(FRAGMENTS[value[1:]])
    if isinstance(value, dict):
        if "@" in value:
            base = resolve(FRAGMENTS[value["@"]])
            return merged(base, {k: resolve(v) for k, v in value.items() if k != "@"})
        return {k: resolve(v) for k, v in value.items()}
    return value


def expand(value: Any) -> Any:
    """Placeholders in a message to send: ``$NOW+300ms`` (a timestamp), ``$TOKEN``."""
    if isinstance(value, dict):
        return {k: expand(v) for k, v in value.items()}
    if isinstance(value, list):
        return [expand(v) for v in value]
    if isinstance(value, str):
        m = NOW_RE.match(value)
        if m:
            at = datetime.datetime.now(datetime.UTC) + datetime.timedelta(
                milliseconds=int(m.group(1))
            )
            return at.isoformat().replace("+00:00", "Z")
        if value == "$TOKEN":
            return TOKEN
    return value


def match(expected: Any, actual: Any, path: str = "") -> str | None:
    """Why ``actual`` (a message as JSON) does not match ``expected``; None if it does.

    Objects match when every expected key matches (other keys are free); ``"*"`` matches
    any present value; ``cards`` lists match as sets (the order of an action's cards is
    free); scalars match by their text (JSON writes 64-bit integers as strings).
    """
    if expected == "*":
        return None if actual is not None else f"{path or 'message'}: missing"
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{path}: expected an object, got {actual!r}"
        for k, v in expected.items():
            if k not in actual:
                if v in (0, False, "", "0", [], None):
                    continue  # proto3 leaves zero values out
                return f"{path}.{k}: missing (expected {v!r})"
            why = match(v, actual[k], f"{path}.{k}")
            if why:
                return why
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return f"{path}: expected a list, got {actual!r}"
        if path.endswith(".cards"):
            if sorted(str(c).upper() for c in expected) != sorted(str(c).upper() for c in actual):
                return f"{path}: expected cards {expected}, got {actual}"
            return None
        if len(expected) != len(actual):
            return f"{path}: expected {expected!r}, got {actual!r}"
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            why = match(e, a, f"{path}[{i}]")
            if why:
                return why
        return None
    if str(expected).lower() != str(actual).lower():
        return f"{path}: expected {expected!r}, got {actual!r}"
    return None


def as_json(msg: play_service.PlayRequest) -> dict[str, Any]:
    return json_format.MessageToDict(msg, preserving_proto_field_name=True)


# -- the scripted referee ------------------------------------------------------------------


class Script:
    """The streams of one transcript, handed out in the order the bot opens them."""

    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        self.lock = threading.Lock()
        self.opened = 0
        self.failures: list[str] = []
        self.finished = threading.Event()  # every listed stream has run its steps
        self.restart: queue.Queue[int] = queue.Queue()
        # Set from a scripted restart's end until the new server listens: a stream the bot
        # opens in between (before the old server has stopped) is refused as a stopped
        # referee would, and is not one of the transcript's streams.
        self.down = threading.Event()
        if not transcript.streams:
            self.finished.set()

    def next_stream(self) -> tuple[int, dict[str, Any] | None]:
        with self.lock:
            self.opened += 1
            n = self.opened
        streams = self.transcript.streams
        if n <= len(streams):
            return n, streams[n - 1]
        return n, self.transcript.data.get("every_later_stream")

    def fail(self, why: str) -> None:
        with self.lock:
            self.failures.append(why)
        self.finished.set()


class Servicer(play_service_grpc.PlayServiceServicer):
    def __init__(self, script: Script) -> None:
        self.script = script

    def Play(
        self,
        request_iterator: Iterator[play_service.PlayRequest],
        context: grpc.ServicerContext,
    ) -> Iterator[play_service.PlayResponse]:
        if self.script.down.is_set():
            context.abort(grpc.StatusCode.UNAVAILABLE, "conformance: the referee is restarting")
        n, stream = self.script.next_stream()
        if stream is None:
            listed = len(self.script.transcript.streams)
            self.script.fail(f"the bot opened stream {n}; the transcript has {listed}")
            context.abort(grpc.StatusCode.UNAVAILABLE, "conformance: no stream scripted")
            return
        inbox: queue.Queue[tuple[str, Any]] = queue.Queue()

        def read() -> None:
            try:
                for req in request_iterator:
                    inbox.put(("msg", req))
                inbox.put(("closed", "the bot closed its side of the stream"))
            except Exception as exc:  # the RPC ended: nothing more to read
                inbox.put(("closed", f"the stream ended ({type(exc).__name__})"))

        threading.Thread(target=read, daemon=True).start()
        anchor = time.monotonic()
        steps = stream.get("steps", [])
        last = n == len(self.script.transcript.streams)
        try:
            for i, step in enumerate(steps):
                where = f"stream {n} step {i + 1}"
                if "send" in step:
                    msg = json_format.ParseDict(
                        expand(resolve(step["send"])), play_service.PlayResponse()
                    )
                    yield msg
                    anchor = time.monotonic()
                elif "recv" in step:
                    self._recv(inbox, step, anchor, where)
                elif "silence_ms" in step:
                    with contextlib.suppress(queue.Empty):
                        kind, got = inbox.get(timeout=step["silence_ms"] / 1000)
                        if kind == "msg":
                            raise Mismatch(
                                f"{where}: expected no message for {step['silence_ms']} ms, "
                                f"got {json.dumps(as_json(got))}"
                                f" after {1000 * (time.monotonic() - anchor):.0f} ms"
                            )
                elif "sleep_ms" in step:
                    time.sleep(step["sleep_ms"] / 1000)
                elif "end" in step:
                    down = step.get("then_down_ms")
                    if down:
                        self.script.down.set()
                        self.script.restart.put(int(down))
                    if last:
                        self.script.finished.set()
                    code = step["end"]
                    if code != "OK":
                        context.abort(grpc.StatusCode[code], f"conformance: scripted {code}")
                    return
                else:
                    raise Mismatch(f"{where}: unknown step {step}")
            if last:
                self.script.finished.set()
        except Mismatch as exc:
            self.script.fail(str(exc))
            context.abort(grpc.StatusCode.ABORTED, "conformance failure")

    @staticmethod
    def _recv(
        inbox: queue.Queue[tuple[str, Any]], step: dict[str, Any], anchor: float, where: str
    ) -> None:
        within = step.get("within_ms", DEFAULT_RECV_MS) / 1000
        expected = expand(resolve(step["recv"]))
        left = anchor + within - time.monotonic()
        try:
            kind, got = inbox.get(timeout=max(0.0, left))
        except queue.Empty:
            raise Mismatch(
                f"{where}: expected {json.dumps(expected)} within {within * 1000:.0f} ms; "
                "nothing came"
            ) from None
        elapsed = 1000 * (time.monotonic() - anchor)
        if kind != "msg":
            raise Mismatch(f"{where}: expected {json.dumps(expected)}; {got}")
        actual = as_json(got)
        why = match(expected, actual)
        if why:
            raise Mismatch(f"{where}: {why} (got {json.dumps(actual)})")
        after = step.get("after_ms")
        if after is not None and elapsed < after:
            raise Mismatch(
                f"{where}: {json.dumps(actual)} came after {elapsed:.0f} ms; "
                f"expected no sooner than {after} ms"
            )


# -- one run -------------------------------------------------------------------------------


def server_credentials(tls: dict[str, Any]) -> grpc.ServerCredentials:
    key = (TLS_DIR / "server.key").read_bytes()
    cert = (TLS_DIR / "server.pem").read_bytes()
    client_auth = bool(tls.get("client_auth"))
    return grpc.ssl_server_credentials(
        [(key, cert)],
        root_certificates=(TLS_DIR / "ca.pem").read_bytes() if client_auth else None,
        require_client_auth=client_auth,
    )


def start_server(script: Script, port: int) -> tuple[grpc.Server, int]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    play_service_grpc.add_PlayServiceServicer_to_server(Servicer(script), server)
    address = f"127.0.0.1:{port}"
    tls = script.transcript.data.get("tls")
    if tls is not None:
        bound = server.add_secure_port(address, server_credentials(tls))
    else:
        bound = server.add_insecure_port(address)
    if bound == 0:
        raise RuntimeError(f"cannot listen on {address}")
    server.start()
    return server, bound


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def bot_env(t: Transcript, port: int) -> dict[str, str]:
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("PUSOY_"):
            del env[k]
    # A backtrace printed on a (scripted) panic can take longer than the budget to
    # symbolise; the transcripts time the library, not the debugger.
    env["RUST_BACKTRACE"] = "0"
    host = "localhost" if t.data.get("tls") is not None else "127.0.0.1"
    env["PUSOY_ADDRESS"] = f"{host}:{port}"
    if t.data.get("token", True):
        env["PUSOY_TOKEN"] = TOKEN
    env["PUSOY_CONFORMANCE_BOT"] = json.dumps(t.data.get("bot", {}))
    for k, v in t.data.get("env", {}).items():
        env[k] = str(v).replace("$TLS", str(TLS_DIR))
    return env


def check_output(t: Transcript, script: Script, lines: list[str]) -> None:
    """``output_has``: each pattern (a regular expression) matches a line of the bot's
    output; ``output_lacks``: none matches any line (the lines the kit's contract defines,
    such as the raised marker of docs/kits.md, section 5)."""
    for pattern in t.data.get("output_has", []):
        if not any(re.search(pattern, line) for line in lines) and not script.failures:
            script.fail(f"no line of the bot's output matches {pattern!r}")
    for pattern in t.data.get("output_lacks", []):
        found = next((line for line in lines if re.search(pattern, line)), None)
        if found is not None and not script.failures:
            script.fail(f"a line of the bot's output matches {pattern!r}: {found!r}")


def run_one(t: Transcript, bot: list[str], verbose: bool) -> tuple[bool, str]:
    script = Script(t)
    server: grpc.Server | None = None
    if t.data.get("listen", True):
        # Port 0: the server binds a free port itself (picking one first and binding it
        # after races with other processes on a busy machine).
        server, port = start_server(script, 0)
    else:
        port = free_port()  # a port nobody listens on
    timeout = t.data.get("timeout_ms", DEFAULT_TIMEOUT_MS) / 1000
    with tempfile.TemporaryFile("w+") as out:
        started = time.monotonic()
        proc = subprocess.Popen(
            bot, env=bot_env(t, port), stdout=out, stderr=subprocess.STDOUT, text=True
        )
        try:
            deadline = started + timeout
            while time.monotonic() < deadline:
                with contextlib.suppress(queue.Empty):
                    down = script.restart.get(timeout=0.05)
                    if server is not None:
                        server.stop(0).wait()
                    time.sleep(down / 1000)
                    server, _ = start_server(script, port)
                    script.down.clear()
                if proc.poll() is not None:
                    break
            if proc.poll() is None:
                script.fail(f"the bot did not exit within {timeout:.0f} s")
                proc.kill()
            code = proc.wait()
            # Scripted steps may still be checking silence after the bot's exit.
            script.finished.wait(timeout=2)
            want = t.data.get("exit", 0)
            if code != want and not script.failures:
                script.fail(f"the bot exited with {code}; expected {want}")
            listed = len(t.streams)
            if script.opened < listed and not script.failures:
                script.fail(f"the bot opened {script.opened} streams; the transcript has {listed}")
        finally:
            if proc.poll() is None:
                proc.kill()
            if server is not None:
                server.stop(0)
        out.seek(0)
        output = out.read()
    check_output(t, script, output.splitlines())
    took = time.monotonic() - started
    if script.failures:
        tail = "\n".join("    | " + line for line in output.splitlines()[-25:])
        return False, f"{script.failures[0]}\n  bot output (last lines):\n{tail}"
    detail = f"{took:.1f} s"
    if verbose:
        detail += "\n" + "\n".join("    | " + line for line in output.splitlines()[-10:])
    return True, detail


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="clients/conformance/run", description="Replay the kits' conformance transcripts."
    )
    parser.add_argument("--bot", required=True, help="the kit's conformance bot command")
    parser.add_argument(
        "--features",
        nargs="*",
        default=["tls"],
        help="optional protocol features the kit supports; transcripts that require "
        "others are skipped (default: tls)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=3,
        help="transcripts run at once, except those that check times closely (default 3)",
    )
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("transcripts", nargs="*", type=Path, default=[TRANSCRIPTS])
    args = parser.parse_args(argv)
    bot = shlex.split(args.bot)
    passed = failed = skipped = 0
    todo: list[Transcript] = []
    for t in load(args.transcripts):
        missing = [f for f in t.requires() if f not in args.features]
        if missing:
            skipped += 1
            print(f"skip {t.name}: needs {', '.join(missing)}")
        else:
            todo.append(t)

    def report(t: Transcript, ok: bool, detail: str) -> None:
        nonlocal passed, failed
        if ok:
            passed += 1
            print(f"ok   {t.name} ({detail})", flush=True)
        else:
            failed += 1
            print(f"FAIL {t.name}: {detail}", flush=True)

    loose = [t for t in todo if not t.timed]
    with futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        running = {pool.submit(run_one, t, bot, args.verbose): t for t in loose}
        for done in futures.as_completed(running):
            report(running[done], *done.result())
    for t in todo:
        if t.timed:
            report(t, *run_one(t, bot, args.verbose))
    line = f"conformance: {passed} passed, {failed} failed"
    if skipped:
        line += f", {skipped} skipped"
    print(line)
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
