"""A TOML table being read, typed: each getter checks its key's type and bounds, and the
table's unknown keys are named once it is read (``done``), so a mistake in a file is a
``ConfigError`` that points at its key (``time.turn_time_ms: should be ...``). Every
configuration file of the house is read through it: a tournament's, a ladder's, a
language model's settings."""

from __future__ import annotations

import dataclasses
import math
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

_T = TypeVar("_T")


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


def read_config(path: Path, parse: Callable[[dict[str, Any], Path], _T]) -> _T:
    """A configuration file read and checked by ``parse``, which is given the file's
    path for its relative paths; ConfigError naming the key at fault."""
    path = Path(path)
    return parse(read_toml(path), path)


_KEY = "toml_key"


def toml_key(default: Any, *, low: float = 0, high: int | None = None) -> Any:
    """A dataclass field set by the TOML key of its name: its default and bounds declared
    once, on the field, and read by ``TomlTable.keys``."""
    return dataclasses.field(default=default, metadata={_KEY: (low, high)})


class TomlTable:
    """A TOML table being read: typed getters, and unknown keys reported at the end."""

    def __init__(self, data: Any, where: str) -> None:
        if not isinstance(data, dict):
            raise ConfigError(where, "should be a table")
        self.data: dict[str, Any] = data
        self.where = where
        self.seen: set[str] = set()

    @classmethod
    def top(cls, data: Mapping[str, Any], source: Path) -> tuple[TomlTable, Path]:
        """A configuration document's top table, and the folder its relative paths are
        taken from (the file's)."""
        return cls(dict(data), ""), Path(source).resolve().parent

    def _at(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def has(self, key: str) -> bool:
        return key in self.data

    def raw(self, key: str) -> Any:
        self.seen.add(key)
        return self.data.get(key)

    def _typed(self, key: str, fits: Callable[[Any], bool], kind: str) -> Any:
        """The key's value, None when unset; ConfigError when it is not ``kind``."""
        value = self.raw(key)
        if value is not None and not fits(value):
            raise ConfigError(self._at(key), f"should be {kind}, got {value!r}")
        return value

    def text(self, key: str, default: str | None = None) -> str | None:
        value: str | None = self._typed(key, lambda v: isinstance(v, str), "a string")
        return default if value is None else value

    def whole(self, key: str, default: int, low: int = 0, high: int | None = None) -> int:
        value: int | None = self._typed(key, _is_whole, "a whole number")
        if value is None:
            return default
        if value < low or (high is not None and value > high):
            bound = f"between {low} and {high}" if high is not None else f"at least {low}"
            raise ConfigError(self._at(key), f"should be {bound}, got {value}")
        return value

    def number(self, key: str, default: float, low: float = 0.0) -> float:
        value: float | None = self._typed(key, _is_number, "a number")
        if value is None:
            return default
        if not math.isfinite(value):
            raise ConfigError(self._at(key), f"should be a finite number, got {value}")
        if value < low:
            raise ConfigError(self._at(key), f"should be at least {low}, got {value}")
        return float(value)

    def flag(self, key: str, default: bool) -> bool:
        value: bool | None = self._typed(key, lambda v: isinstance(v, bool), "true or false")
        return default if value is None else value

    def keys(self, cls: type, *names: str) -> dict[str, Any]:
        """The fields of the dataclass ``cls`` declared with ``toml_key`` (those ``names``, in
        that order, else all), each read by its default's type within its bounds."""
        declared = {f.name: f for f in dataclasses.fields(cls) if _KEY in f.metadata}
        out: dict[str, Any] = {}
        for name in names or declared:
            field = declared[name]
            low, high = field.metadata[_KEY]
            default: Any = field.default
            if isinstance(default, bool):
                out[name] = self.flag(name, default)
            elif isinstance(default, int):
                out[name] = self.whole(name, default, int(low), high)
            else:
                out[name] = self.number(name, default, float(low))
        return out

    def table(self, key: str) -> TomlTable:
        value = self.raw(key)
        return TomlTable({} if value is None else value, self._at(key))

    def done(self) -> None:
        unknown = sorted(set(self.data) - self.seen)
        if unknown:
            known = ", ".join(sorted(self.seen))
            raise ConfigError(self._at(unknown[0]), f"unknown key (known here: {known or 'none'})")


def _is_whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


__all__ = ["TomlTable"]
