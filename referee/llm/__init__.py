"""Language models at the table: a seat played by any OpenAI-compatible model.

A model seat is named like a built-in bot, ``llm:SETTINGS.toml`` (``referee match --bot
llm:gemma.toml``, a tournament's ``builtin = "llm:gemma.toml"``, a ladder's anchors, the
benchmark), and is the house's own code: it plays beside the referee through the seat
client, outside the bots' jail (``player.py``). Its settings are the organiser's file
(``settings.py``); what the model sees is the seat's own view (``prompt.py``); what it
may answer (``answer.py``); the endpoint (``endpoint.py``); the trace bound to the
signed log (``trace.py``); what its moves came to (``report.py``). docs/llm.md.

This module imports nothing heavy: configuration code asks it whether a name is a model
seat without loading the endpoint's client.
"""

from __future__ import annotations

from pathlib import Path

MODEL_PREFIX = "llm:"


def is_model_seat(name: str) -> bool:
    """Whether a built-in bot's name is a model seat (``llm:FILE``)."""
    return name.startswith(MODEL_PREFIX)


def model_seat_name(text: str, base: Path) -> str:
    """``llm:FILE`` with FILE made absolute (relative to ``base``), after checking that
    the settings read; ConfigError (``referee.tournament.config``) when they do not.
    The API key is not read here: only when the seat plays."""
    from referee.llm.settings import load_model_settings

    raw = text[len(MODEL_PREFIX) :].strip()
    if not raw:
        from referee.tournament.config import ConfigError

        raise ConfigError("", f"{text!r}: give the model's settings file after {MODEL_PREFIX}")
    path = (base / Path(raw).expanduser()).resolve()
    load_model_settings(path)
    return MODEL_PREFIX + str(path)


def settings_file(name: str) -> Path:
    """The settings file of a model seat's name."""
    return Path(name[len(MODEL_PREFIX) :])


__all__ = ["MODEL_PREFIX", "is_model_seat", "model_seat_name", "settings_file"]
