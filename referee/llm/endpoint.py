"""One OpenAI-compatible chat endpoint: a completion per call, provider failures retried.

Any server that speaks ``POST {url}/chat/completions`` works: a hosted API, vLLM,
llama.cpp's or llama-cpp-python's server, Ollama. HTTP 429 and 5xx answers, time-outs
and dropped connections are the provider's failures, not the model's: they are retried
with exponential back-off (a ``Retry-After`` is honoured up to the cap) while the turn's
time allows, and each is counted apart from the model's own faults. Any other 4xx is
the organiser's problem (a wrong model name, a bad key) and is not retried. Every answer
is bounded (``MAX_RESPONSE_BYTES``) before it is parsed; the API key goes in a header
and nowhere else: never in an error message, a trace or a log.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
import time
from collections.abc import Sequence
from typing import Any

import aiohttp

MAX_RESPONSE_BYTES = 1 << 20
MAX_TEXT_CHARS = 50_000
"""An answer's text (and its reasoning) is cut to this many characters."""
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
MAX_BACKOFF_S = 30.0


class ProviderError(Exception):
    """The endpoint gave no completion: ``retryable`` failures were retried until the
    time or the retries ran out. The message names the status, never the key."""

    def __init__(
        self,
        message: str,
        *,
        status: int = 0,
        retryable: bool = False,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.retry_after_s = retry_after_s


@dataclasses.dataclass(frozen=True, slots=True)
class ProviderAttempt:
    """A call that failed at the provider (``status`` 0: no HTTP answer), and how long
    it took."""

    error: str
    status: int
    ms: int


@dataclasses.dataclass(frozen=True, slots=True)
class Completion:
    """What the model answered: its text, the reasoning the endpoint returned apart (or
    ""), token counts, and the provider failures retried before it."""

    text: str
    reasoning: str
    prompt_tokens: int
    completion_tokens: int
    latency_ms: int
    finish_reason: str
    failures: tuple[ProviderAttempt, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class EndpointSettings:
    """Where the model is and how to call it."""

    url: str
    """The API's base URL, up to and including ``/v1``."""
    model: str
    api_key: str = dataclasses.field(default="", repr=False)
    timeout_s: float = 60.0
    """One HTTP call's limit."""
    retries: int = 4
    """Provider failures retried per completion."""
    backoff_s: float = 1.0
    """The first pause after a failure; it doubles each time, jittered."""
    temperature: float | None = 0.0
    max_tokens: int = 256
    """Tokens per answer (the endpoint's ``max_tokens``)."""
    structured: str = "off"
    """How to ask for output constrained to a JSON schema: ``off``, ``json_schema``
    (OpenAI's ``response_format``) or ``json_object`` (``{"type": "json_object",
    "schema": ...}``: llama.cpp, llama-cpp-python, Anyscale)."""
    extra: tuple[tuple[str, Any], ...] = ()
    """More body fields for the endpoint (``seed``, ``top_p``...), from the settings."""


def _response_format(style: str, schema: dict[str, Any] | None) -> dict[str, Any] | None:
    if schema is None or style == "off":
        return None
    if style == "json_object":
        return {"type": "json_object", "schema": schema}
    return {
        "type": "json_schema",
        "json_schema": {"name": "move", "schema": schema, "strict": True},
    }


def _text(value: Any) -> str:
    return value[:MAX_TEXT_CHARS] if isinstance(value, str) else ""


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


class Endpoint:
    """``await Endpoint(settings).complete(messages, deadline=...)``; ``close`` at the end."""

    def __init__(self, settings: EndpointSettings) -> None:
        self.settings = settings
        self._session: aiohttp.ClientSession | None = None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None:
            headers = {"Content-Type": "application/json"}
            if self.settings.api_key:
                headers["Authorization"] = f"Bearer {self.settings.api_key}"
            self._session = aiohttp.ClientSession(headers=headers)
        return self._session

    def body(
        self, messages: Sequence[dict[str, str]], schema: dict[str, Any] | None, max_tokens: int
    ) -> dict[str, Any]:
        s = self.settings
        body: dict[str, Any] = {"model": s.model, "messages": list(messages)}
        body["max_tokens"] = max_tokens
        if s.temperature is not None:
            body["temperature"] = s.temperature
        fmt = _response_format(s.structured, schema)
        if fmt is not None:
            body["response_format"] = fmt
        body.update(dict(s.extra))
        return body

    async def complete(
        self,
        messages: Sequence[dict[str, str]],
        *,
        deadline: float,
        schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        """One completion, provider failures retried until ``deadline`` (a
        ``time.monotonic()`` value) or the retries run out; ProviderError then."""
        body = self.body(messages, schema, max_tokens or self.settings.max_tokens)
        failures: list[ProviderAttempt] = []
        pause = self.settings.backoff_s
        while True:
            started = time.monotonic()
            left = deadline - started
            if left <= 0:
                raise ProviderError(self._gave_up("the turn's time ran out", failures))
            try:
                completion = await self._call(body, min(left, self.settings.timeout_s))
                return dataclasses.replace(completion, failures=tuple(failures))
            except ProviderError as exc:
                ms = int((time.monotonic() - started) * 1000)
                failures.append(ProviderAttempt(str(exc), exc.status, ms))
                if not exc.retryable or len(failures) > self.settings.retries:
                    raise ProviderError(
                        self._gave_up(str(exc), failures), status=exc.status
                    ) from None
                wait = min(pause * (1 + random.random() / 2), MAX_BACKOFF_S)
                if exc.retry_after_s is not None:
                    wait = min(max(wait, exc.retry_after_s), MAX_BACKOFF_S)
                if time.monotonic() + wait >= deadline:
                    raise ProviderError(
                        self._gave_up(f"{exc}; no time left to retry", failures), status=exc.status
                    ) from None
                await asyncio.sleep(wait)
                pause = min(pause * 2, MAX_BACKOFF_S)

    @staticmethod
    def _gave_up(why: str, failures: Sequence[ProviderAttempt]) -> str:
        n = len(failures)
        return f"{why} (after {n} failed call{'s' if n != 1 else ''})" if n else why

    async def _call(self, body: dict[str, Any], timeout_s: float) -> Completion:
        url = self.settings.url.rstrip("/") + "/chat/completions"
        started = time.monotonic()
        try:
            async with asyncio.timeout(timeout_s):
                async with self._http().post(url, json=body) as resp:
                    raw = await resp.content.read(MAX_RESPONSE_BYTES + 1)
                    status = resp.status
                    retry_after = resp.headers.get("Retry-After", "")
        except TimeoutError:
            raise ProviderError(f"no answer within {timeout_s:.1f} s", retryable=True) from None
        except aiohttp.ClientError as exc:
            raise ProviderError(
                f"connection failed: {type(exc).__name__}", retryable=True
            ) from None
        latency_ms = int((time.monotonic() - started) * 1000)
        if status != 200:
            raise ProviderError(
                f"HTTP {status}{_error_detail(raw)}",
                status=status,
                retryable=status in RETRY_STATUSES,
                retry_after_s=_seconds(retry_after),
            )
        if len(raw) > MAX_RESPONSE_BYTES:
            raise ProviderError(f"an answer of more than {MAX_RESPONSE_BYTES} bytes", status=200)
        try:
            data = json.loads(raw)
            choice = data["choices"][0]
            message = choice.get("message") or {}
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            raise ProviderError("an answer that is not a chat completion", status=200) from None
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        reasoning = message.get("reasoning_content") or message.get("reasoning") or ""
        return Completion(
            text=_text(message.get("content")),
            reasoning=_text(reasoning),
            prompt_tokens=_count(usage.get("prompt_tokens")),
            completion_tokens=_count(usage.get("completion_tokens")),
            latency_ms=latency_ms,
            finish_reason=_text(choice.get("finish_reason"))[:40],
        )


def _seconds(text: str) -> float | None:
    """A Retry-After header's delay in seconds (the date form is not used by APIs)."""
    try:
        return max(0.0, float(text)) if text else None
    except ValueError:
        return None


def _error_detail(raw: bytes) -> str:
    """A provider's error message, short and printable (it never holds our key)."""
    try:
        data = json.loads(raw)
        message = data.get("error", {}).get("message") if isinstance(data, dict) else None
    except (ValueError, AttributeError):
        message = None
    if not isinstance(message, str) or not message.strip():
        return ""
    short = "".join(c if c.isprintable() else " " for c in message.strip())[:200]
    return f": {short}"
