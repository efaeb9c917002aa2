"""The endpoint client: provider failures retried with back-off and counted apart, other
errors not retried, the key only in its header, every wait within the turn's time."""

from __future__ import annotations

import time

import pytest
from scripted import ScriptedEndpoint, chat

from referee.llm.endpoint import Endpoint, EndpointSettings, ProviderError

MESSAGES = [{"role": "user", "content": "Your move?"}]
KEY = "sk-test-secret-123"


def endpoint(url: str, **kw: object) -> Endpoint:
    settings = EndpointSettings(url=url, model="m", api_key=KEY, backoff_s=0.01, **kw)  # type: ignore[arg-type]
    return Endpoint(settings)


async def test_a_completion_returns_text_reasoning_and_tokens():
    async with ScriptedEndpoint([chat('{"pass": true}', reasoning="no", tokens=(40, 7))]) as ep:
        client = endpoint(ep.url)
        try:
            done = await client.complete(MESSAGES, deadline=time.monotonic() + 10)
        finally:
            await client.close()
    assert (done.text, done.reasoning, done.prompt_tokens, done.completion_tokens) == (
        '{"pass": true}',
        "no",
        40,
        7,
    )
    assert ep.auth == [f"Bearer {KEY}"]
    assert ep.requests[0]["model"] == "m" and ep.requests[0]["max_tokens"] == 256


async def test_429_and_5xx_are_retried_and_counted():
    busy = (429, {"error": {"message": "slow down"}})
    async with ScriptedEndpoint([busy, (503, "down"), chat("ok")]) as ep:
        client = endpoint(ep.url)
        try:
            done = await client.complete(MESSAGES, deadline=time.monotonic() + 10)
        finally:
            await client.close()
    assert done.text == "ok"
    assert [f.status for f in done.failures] == [429, 503]
    assert "slow down" in done.failures[0].error


async def test_retries_run_out_with_a_provider_error_that_never_shows_the_key():
    async with ScriptedEndpoint([(500, {"error": {"message": "boom"}})]) as ep:
        client = endpoint(ep.url, retries=2)
        try:
            with pytest.raises(ProviderError) as err:
                await client.complete(MESSAGES, deadline=time.monotonic() + 10)
        finally:
            await client.close()
    assert len(ep.requests) == 3
    assert "HTTP 500: boom" in str(err.value) and "after 3 failed calls" in str(err.value)
    assert KEY not in str(err.value)


async def test_a_client_error_is_not_retried():
    async with ScriptedEndpoint([(404, {"error": {"message": "no such model"}}), chat("x")]) as ep:
        client = endpoint(ep.url)
        try:
            with pytest.raises(ProviderError, match="HTTP 404: no such model"):
                await client.complete(MESSAGES, deadline=time.monotonic() + 10)
        finally:
            await client.close()
    assert len(ep.requests) == 1


async def test_no_retry_outlives_the_turn():
    async with ScriptedEndpoint([(503, "x")], headers={"Retry-After": "20"}) as ep:
        client = endpoint(ep.url)
        started = time.monotonic()
        try:
            with pytest.raises(ProviderError, match="no time left"):
                await client.complete(MESSAGES, deadline=started + 1.0)
        finally:
            await client.close()
    assert time.monotonic() - started < 1.0


async def test_an_answer_that_is_not_a_completion_is_a_provider_error():
    async with ScriptedEndpoint([(200, {"nothing": 1})]) as ep:
        client = endpoint(ep.url)
        try:
            with pytest.raises(ProviderError, match="not a chat completion"):
                await client.complete(MESSAGES, deadline=time.monotonic() + 10)
        finally:
            await client.close()


async def test_an_unreachable_endpoint_fails_within_the_turn():
    client = endpoint("http://127.0.0.1:9/v1", retries=1)
    try:
        with pytest.raises(ProviderError, match="connection failed"):
            await client.complete(MESSAGES, deadline=time.monotonic() + 5)
    finally:
        await client.close()


@pytest.mark.parametrize(
    ("style", "key"), [("json_schema", "json_schema"), ("json_object", "schema")]
)
async def test_structured_output_is_asked_for_in_the_endpoints_style(style, key):
    async with ScriptedEndpoint([chat('{"pass": true}')]) as ep:
        client = endpoint(ep.url, structured=style)
        try:
            await client.complete(MESSAGES, deadline=time.monotonic() + 10, schema={"anyOf": []})
        finally:
            await client.close()
    assert key in ep.requests[0]["response_format"]
