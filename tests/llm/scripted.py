"""A scripted OpenAI-compatible endpoint for the unit tests of the parser and the
retries: a real aiohttp server on a free loopback port whose answers are a script.
Never a stand-in for the model in the end-to-end test (tests/llm/test_real_model.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from aiohttp import web

Reply = tuple[int, Any] | Callable[[dict[str, Any]], tuple[int, Any]]
"""(status, JSON body or text), or a function of the request's body giving one."""


def chat(
    content: str, *, reasoning: str = "", tokens: tuple[int, int] = (10, 5)
) -> tuple[int, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning:
        message["reasoning_content"] = reasoning
    return 200, {
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": tokens[0], "completion_tokens": tokens[1]},
    }


class ScriptedEndpoint:
    """``async with ScriptedEndpoint(replies) as ep``: ``ep.url`` is the API's base URL;
    ``ep.requests`` the bodies and headers it was sent. Past the script's end every
    request gets the last reply."""

    def __init__(self, replies: list[Reply], headers: dict[str, str] | None = None) -> None:
        self.replies = replies
        self.headers = headers or {}
        self.requests: list[dict[str, Any]] = []
        self.auth: list[str] = []
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        self.auth.append(request.headers.get("Authorization", ""))
        reply = self.replies[min(len(self.requests), len(self.replies)) - 1]
        status, data = reply(body) if callable(reply) else reply
        text = data if isinstance(data, str) else json.dumps(data)
        return web.Response(
            status=status, text=text, headers=self.headers, content_type="application/json"
        )

    async def __aenter__(self) -> ScriptedEndpoint:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._handle)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}/v1"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._runner is not None
        await self._runner.cleanup()
