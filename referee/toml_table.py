"""A TOML table being read, typed: each getter checks its key's type and bounds, and the
table's unknown keys are named once it is read (``done``), so a mistake in a file is a
``ConfigError`` that points at its key (``time.turn_time_ms: should be ...``). Every
configuration file of the house is read through it: a tournament's, a ladder's, a
language model's settings."""

from __future__ import annotations

import math
import tomllib
from pathlib import Path
from typing import Any


class ConfigError(ValueError):
    """A configuration that cannot be run; ``where`` is the key at fault."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}" if where else message)
        self.where = where
        self.message = message


def read_toml(path: Path) -> dict[str, Any]:
    """A configuration file's TOML document (a tournament's or a ladder's); ConfigError
    when it cannot be read or is not TOML."""
    try:
        return tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError("", f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError("", f"{path} is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError("", f"{path} is not valid TOML: {exc}") from None


class TomlTable:
    """A TOML table being read: typed getters, and unknown keys reported at the end."""

    def __init__(self, data: Any, where: str) -> None:
        if not isinstance(data, dict):
            raise ConfigError(where, "should be a table")
        self.data: dict[str, Any] = data
        self.where = where
        self.seen: set[str] = set()

    def _at(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def has(self, key: str) -> bool:
        return key in self.data

    def raw(self, key: str) -> Any:
        self.seen.add(key)
        return self.data.get(key)

    def text(self, key: str, default: str | None = None) -> str | None:
        value = self.raw(key)
        if value is None:
            return default
        if not isinstance(value, str):
            raise ConfigError(self._at(key), f"should be a string, got {value!r}")
        return value

    def whole(self, key: str, default: int, low: int = 0, high: int | None = None) -> int:
        value = self.raw(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(self._at(key), f"should be a whole number, got {value!r}")
        if value < low or (high is not None and value > high):
            bound = f"between {low} and {high}" if high is not None else f"at least {low}"
            raise ConfigError(self._at(key), f"should be {bound}, got {value}")
        return value

    def number(self, key: str, default: float, low: float = 0.0) -> float:
        value = self.raw(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(self._at(key), f"should be a number, got {value!r}")
        if not math.isfinite(value):
            raise ConfigError(self._at(key), f"should be a finite number, got {value}")
        if value < low:
            raise ConfigError(self._at(key), f"should be at least {low}, got {value}")
        return float(value)

    def flag(self, key: str, default: bool) -> bool:
        value = self.raw(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise ConfigError(self._at(key), f"should be true or false, got {value!r}")
        return value

    def table(self, key: str) -> TomlTable:
        value = self.raw(key)
        return TomlTable({} if value is None else value, self._at(key))

    def done(self) -> None:
        unknown = sorted(set(self.data) - self.seen)
        if unknown:
            known = ", ".join(sorted(self.seen))
            raise ConfigError(self._at(unknown[0]), f"unknown key (known here: {known or 'none'})")


__all__ = ["TomlTable"]
