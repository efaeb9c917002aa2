"""A model seat's settings: a TOML file the organiser owns (docs/llm.md, "Settings").

It says where the model is (an OpenAI-compatible endpoint and the model's name), what
the model sees and may answer, its faults' limits, its token caps and prices, and the
seat's own clock. The API key never appears in it, nor on a command line: it is read
from a file (``api_key_file``, which must not be readable by other users) or from the
referee's environment (``api_key_env``), and lives only in the request header.

    name = "gemma-270m"                    # the seat's name (default: the file's name)
    [endpoint]
    url = "http://127.0.0.1:8080/v1"
    model = "gemma-3-270m"
    api_key_env = "OPENAI_API_KEY"         # or api_key_file = "~/.config/openai.key"
    timeout_s = 60                         # one HTTP call
    retries = 4                            # provider failures (429, 5xx, time-outs)
    backoff_s = 1.0
    structured = "off"                     # "json_schema" or "json_object": constrained
    constrain = "legal"                    # to the legal moves, or "format": any move
    temperature = 0.0
    [prompt]
    format = "text"                        # or "json"
    legal_plays = "full"                   # "grouped" or "none"
    primer = true
    system = ""                            # your own words, added to the system message
    keep = "full"                          # the trace keeps each prompt: "full" or "hash"
    [limits]
    parse_retries = 2                      # unparsable answers asked again, per attempt
    pause_after_failures = 3               # questions in a row the endpoint failed, then
    pause_s = 60                           # no question for this long (0 above: never)
    max_tokens_per_move = 256
    max_tokens_per_match = 0               # 0: no cap
    [prices]                               # optional: an estimated cost in the summary
    input_per_million = 0.0
    output_per_million = 0.0
    [clock]                                # the seat's own (the other seats keep theirs)
    turn_time_ms = 60000
    time_bank_ms = 0
"""

from __future__ import annotations

import dataclasses
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from referee.llm.endpoint import EndpointSettings
from referee.llm.prompt import FORMATS, LEGAL_PLAYS, PromptOptions
from referee.toml_table import ConfigError, TomlTable, read_toml, toml_key

STRUCTURED = ("off", "json_schema", "json_object")
CONSTRAIN = ("legal", "format")
KEEP = ("full", "hash")
MAX_NAME_CHARS = 40
MAX_FILE_BYTES = 64 * 1024
MAX_TIME_MS = 3_600_000


@dataclasses.dataclass(frozen=True, slots=True)
class ModelSettings:
    """Everything a model seat plays by; ``endpoint.api_key`` is filled in by
    ``with_key`` only when the seat starts, so a settings value can be shown or logged."""

    source: Path
    name: str
    endpoint: EndpointSettings
    prompt: PromptOptions
    constrain: str = "legal"
    """What a constrained answer may be: a ``legal`` move, or any well-formed move
    (``format``: the model's own choice, judged by the referee)."""
    keep_prompts: bool = True
    parse_retries: int = toml_key(2, high=10)
    pause_after_failures: int = toml_key(3, high=1000)
    """Questions in a row the endpoint failed (each after its retries) before the seat
    stops asking for ``pause_s`` and plays its own default at once (0: never)."""
    pause_s: float = toml_key(60.0)
    max_tokens_per_match: int = toml_key(0, high=10**12)
    input_per_million: float = toml_key(0.0)
    output_per_million: float = toml_key(0.0)
    turn_time_ms: int = toml_key(60_000, low=1, high=MAX_TIME_MS)
    time_bank_ms: int = toml_key(0, high=MAX_TIME_MS)
    api_key_file: Path | None = None
    api_key_env: str = ""

    def public(self) -> dict[str, Any]:
        """What a trace records of the settings: never the key, nor where it is kept."""
        e = self.endpoint
        return {
            "name": self.name,
            "url": e.url,
            "model": e.model,
            "structured": e.structured,
            "temperature": e.temperature,
            "max_tokens_per_move": e.max_tokens,
            "format": self.prompt.format,
            "legal_plays": self.prompt.legal_plays,
            "primer": self.prompt.primer,
        }

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """The estimated cost of these tokens at the organiser's prices (0: none given)."""
        return (
            prompt_tokens * self.input_per_million + completion_tokens * self.output_per_million
        ) / 1_000_000

    def with_key(self, env: Mapping[str, str] | None = None) -> ModelSettings:
        """These settings with the API key read (file or environment); ConfigError when
        the file cannot be read, is open to other users, or the variable is unset."""
        key = read_api_key(self.api_key_file, self.api_key_env, env)
        return dataclasses.replace(self, endpoint=dataclasses.replace(self.endpoint, api_key=key))


def read_api_key(path: Path | None, variable: str, env: Mapping[str, str] | None = None) -> str:
    """The API key, or "" when the settings name none (a local server needs none)."""
    env = os.environ if env is None else env
    if path is not None:
        try:
            info = path.stat()
            if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
                raise ConfigError(
                    "endpoint.api_key_file",
                    f"{path} is readable by other users: chmod 600 it",
                )
            key = path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ConfigError(
                "endpoint.api_key_file", f"cannot read {path}: {exc.strerror or exc}"
            ) from None
        except UnicodeDecodeError:
            raise ConfigError("endpoint.api_key_file", f"{path} is not text") from None
        if not key or any(c.isspace() or not c.isprintable() for c in key):
            raise ConfigError("endpoint.api_key_file", f"{path} holds no usable key")
        return key
    if variable:
        key = env.get(variable, "").strip()
        if not key:
            raise ConfigError("endpoint.api_key_env", f"the variable {variable} is not set")
        return key
    return ""


def _choice(table: TomlTable, key: str, default: str, allowed: tuple[str, ...]) -> str:
    value = table.text(key, default) or default
    if value not in allowed:
        raise ConfigError(f"{table.where}.{key}", f"{value!r} is not one of {', '.join(allowed)}")
    return value


def load_model_settings(path: Path) -> ModelSettings:
    """Read and check a model seat's settings file; ConfigError naming the key."""
    path = Path(path).expanduser()
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise ConfigError("", f"{path} is over {MAX_FILE_BYTES // 1024} KiB")
    except OSError as exc:
        raise ConfigError("", f"cannot read {path}: {exc.strerror or exc}") from None
    return parse_model_settings(read_toml(path), path.resolve())


def parse_model_settings(data: Mapping[str, Any], source: Path) -> ModelSettings:
    top = TomlTable(dict(data), "")
    name = top.text("name", "") or source.stem
    if len(name) > MAX_NAME_CHARS or not name.isprintable() or not name.strip():
        raise ConfigError("name", f"a seat name has 1 to {MAX_NAME_CHARS} printable characters")

    ep = top.table("endpoint")
    url = ep.text("url", "") or ""
    if not url.startswith(("http://", "https://")):
        raise ConfigError("endpoint.url", "give the API's base URL, http(s)://HOST[:PORT]/v1")
    model = ep.text("model", "") or ""
    if not model:
        raise ConfigError("endpoint.model", "give the model's name as the endpoint knows it")
    key_file = ep.text("api_key_file", "") or ""
    key_env = ep.text("api_key_env", "") or ""
    if ep.has("api_key"):
        raise ConfigError(
            "endpoint.api_key",
            "the key is not kept in the settings: give api_key_file or api_key_env",
        )
    if key_file and key_env:
        raise ConfigError("endpoint", "give api_key_file or api_key_env, not both")
    key_path = (source.parent / Path(key_file).expanduser()) if key_file else None
    temperature = ep.number("temperature", 0.0) if ep.has("temperature") else 0.0
    endpoint = EndpointSettings(
        url=url,
        model=model,
        timeout_s=ep.number("timeout_s", 60.0, low=0.1),
        retries=ep.whole("retries", 4, high=20),
        backoff_s=ep.number("backoff_s", 1.0, low=0.0),
        temperature=temperature,
        structured=_choice(ep, "structured", "off", STRUCTURED),
        extra=(("seed", ep.whole("seed", 0)),) if ep.has("seed") else (),
    )
    constrain = _choice(ep, "constrain", "legal", CONSTRAIN)
    ep.done()

    pr = top.table("prompt")
    prompt = PromptOptions(
        format=_choice(pr, "format", "text", FORMATS),
        legal_plays=_choice(pr, "legal_plays", "full", LEGAL_PLAYS),
        primer=pr.flag("primer", True),
        system=(pr.text("system", "") or "")[:4000],
    )
    keep = _choice(pr, "keep", "full", KEEP)
    pr.done()

    li = top.table("limits")
    faults = li.keys(ModelSettings, "parse_retries", "pause_after_failures", "pause_s")
    max_tokens = li.whole("max_tokens_per_move", 256, low=1, high=1_000_000)
    per_match = li.keys(ModelSettings, "max_tokens_per_match")
    li.done()

    pc = top.table("prices")
    prices = pc.keys(ModelSettings, "input_per_million", "output_per_million")
    pc.done()

    ck = top.table("clock")
    clock = ck.keys(ModelSettings, "turn_time_ms", "time_bank_ms")
    ck.done()
    top.done()
    return ModelSettings(
        source=source,
        name=name,
        endpoint=dataclasses.replace(endpoint, max_tokens=max_tokens),
        prompt=prompt,
        constrain=constrain,
        keep_prompts=keep == "full",
        **faults,
        **per_match,
        **prices,
        **clock,
        api_key_file=key_path,
        api_key_env=key_env,
    )
