"""A log line's JSON to and from a LogEntry, several times faster than ``json_format``.

``json_format`` costs about a millisecond a line each way, which makes writing a move
cost more than all of gRPC's work for it, and resuming or verifying a 10,000-line log
take seconds. These walk the message descriptors instead (cached per message type);
``to_json`` writes the line's text directly, with no dictionary in between.
The reader is as strict for what a log holds: an unknown field, a value of the wrong
type or out of range is a ``ParseError``. Tests check that both give exactly what
``json_format`` gives (``MessageToDict`` with proto field names, ``ParseDict``) on every
log. The log's messages use no floats, bytes, maps or other well-known types than
Timestamp; a field of such a type is refused.
"""

from __future__ import annotations

import datetime
import keyword
import re
from collections.abc import Callable
from json.encoder import encode_basestring
from typing import Any

from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from referee.protocol import common

ParseError = json_format.ParseError

_INTS = {
    FieldDescriptor.TYPE_INT32,
    FieldDescriptor.TYPE_INT64,
    FieldDescriptor.TYPE_UINT32,
    FieldDescriptor.TYPE_UINT64,
    FieldDescriptor.TYPE_SINT32,
    FieldDescriptor.TYPE_SINT64,
    FieldDescriptor.TYPE_FIXED32,
    FieldDescriptor.TYPE_FIXED64,
    FieldDescriptor.TYPE_SFIXED32,
    FieldDescriptor.TYPE_SFIXED64,
}

Converter = Callable[[Any], Any]
_fields: dict[str, dict[str, tuple[FieldDescriptor, Converter | None]]] = {}


def json_int(value: Any) -> int | None:
    """An integer of protobuf JSON: a number, or a string of one (64-bit fields are
    written as strings); None for anything else, a boolean too."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return None
    return None


def _int(value: Any) -> int:
    number = json_int(value)
    if number is not None:
        return number
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise ParseError(f"{value!r} is not an integer")


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ParseError(f"{value!r} is not a boolean")
    return value


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise ParseError(f"{value!r} is not a string")
    return value


def _enum(fd: FieldDescriptor) -> Converter:
    assert fd.enum_type is not None
    by_name = {v.name: v.number for v in fd.enum_type.values}
    numbers = set(by_name.values())

    def convert(value: Any) -> int:
        if isinstance(value, str) and value in by_name:
            return by_name[value]
        if isinstance(value, int) and not isinstance(value, bool) and value in numbers:
            return value
        raise ParseError(f"{value!r} is not a value of {fd.enum_type.name}")  # type: ignore[union-attr]

    return convert


_READ_SCALAR: dict[int, Converter] = {
    **dict.fromkeys(_INTS, _int),
    FieldDescriptor.TYPE_BOOL: _bool,
    FieldDescriptor.TYPE_STRING: _str,
}
"""How to read one value of each scalar type the log uses (enums aside)."""


def _converter(fd: FieldDescriptor) -> Converter | None:
    """How to read one scalar value of ``fd``; None for a message field."""
    if fd.type == FieldDescriptor.TYPE_MESSAGE:
        return None
    if fd.type == FieldDescriptor.TYPE_ENUM:
        return _enum(fd)
    if fd.type not in _READ_SCALAR:
        raise ParseError(f"field {fd.name} of an unsupported type")
    return _READ_SCALAR[fd.type]


def _table(desc: Any) -> dict[str, tuple[FieldDescriptor, Converter | None]]:
    table = _fields.get(desc.full_name)
    if table is None:
        table = {}
        for fd in desc.fields:
            entry = (fd, _converter(fd))
            table[fd.name] = entry
            table[fd.json_name] = entry
        _fields[desc.full_name] = table
    return table


_UTC_TIME = re.compile(r"(\d{4}-\d\d-\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?Z")
_day_seconds: dict[str, int] = {}
"""Seconds at the start of each date seen (a log spans a day or two)."""


def _timestamp_fast(text: str) -> tuple[int, int] | None:
    """(seconds, nanos) of the UTC form the referee writes, or None for any other form
    (``Timestamp.FromJsonString`` then judges it): strptime made resuming a long log
    spend a third of its time on its timestamps."""
    m = _UTC_TIME.fullmatch(text)
    if m is None:
        return None
    date, hh, mm, ss, frac = m.groups()
    day = _day_seconds.get(date)
    if day is None:
        try:
            d = datetime.date.fromisoformat(date)
        except ValueError:
            return None
        if len(_day_seconds) > 1024:
            _day_seconds.clear()
        day = _day_seconds[date] = (d.toordinal() - _EPOCH_ORDINAL) * 86400
    h, mi, sec = int(hh), int(mm), int(ss)
    if h > 23 or mi > 59 or sec > 59:
        return None
    nanos = int(frac.ljust(9, "0")) if frac else 0
    return day + h * 3600 + mi * 60 + sec, nanos


_EPOCH_ORDINAL = datetime.date(1970, 1, 1).toordinal()


def _fill(msg: Message, data: Any, lenient: bool = False) -> None:
    desc = msg.DESCRIPTOR
    if desc.full_name == "google.protobuf.Timestamp":
        assert isinstance(msg, Timestamp)
        text = _str(data)
        fast = _timestamp_fast(text)
        if fast is not None:
            msg.seconds, msg.nanos = fast
            return
        try:
            msg.FromJsonString(text)
        except ValueError as exc:
            raise ParseError(f"bad timestamp {data!r}: {exc}") from None
        return
    if not isinstance(data, dict):
        raise ParseError(f"{desc.name} must be a JSON object")
    table = _table(desc)
    msg.SetInParent()
    for key, value in data.items():
        found = table.get(key)
        if found is None:
            if lenient:
                continue
            raise ParseError(f"message {desc.full_name} has no field named {key!r}")
        fd, convert = found
        repeated = fd.is_repeated
        try:
            if convert is None:
                if repeated:
                    if not isinstance(value, list):
                        raise ParseError(f"{key} must be a list")
                    container = getattr(msg, fd.name)
                    for item in value:
                        _fill(container.add(), item, lenient)
                else:
                    _fill(getattr(msg, fd.name), value, lenient)
            elif repeated:
                if not isinstance(value, list):
                    raise ParseError(f"{key} must be a list")
                getattr(msg, fd.name).extend(convert(v) for v in value)
            else:
                setattr(msg, fd.name, convert(value))
        except ParseError:
            if lenient and fd.type == FieldDescriptor.TYPE_ENUM:
                continue  # a value from a later version
            raise
        except (ValueError, TypeError) as exc:
            raise ParseError(f"{desc.name}.{key}: {exc}") from None


def parse_entry(data: Any, *, ignore_unknown: bool = False) -> common.LogEntry:
    """A LogEntry from a line's parsed JSON; ParseError when it is not one.
    ``ignore_unknown`` skips fields and enum values this version does not know."""
    entry = common.LogEntry()
    _fill(entry, data, ignore_unknown)
    return entry


_64BIT = {
    FieldDescriptor.TYPE_INT64,
    FieldDescriptor.TYPE_UINT64,
    FieldDescriptor.TYPE_SINT64,
    FieldDescriptor.TYPE_FIXED64,
    FieldDescriptor.TYPE_SFIXED64,
}
_writers: dict[str, dict[str, Callable[[Any], Any]]] = {}


def _enum_name(fd: FieldDescriptor) -> Callable[[Any], Any]:
    assert fd.enum_type is not None
    names = {v.number: v.name for v in fd.enum_type.values}
    return lambda value: names.get(value, value)


def _writer(fd: Any) -> Callable[[Any], Any]:
    """How ``json_format`` writes one value of ``fd``."""
    if fd.type == FieldDescriptor.TYPE_MESSAGE:
        if fd.message_type is not None and fd.message_type.full_name == "google.protobuf.Timestamp":
            return lambda value: value.ToJsonString()
        return to_dict
    if fd.type == FieldDescriptor.TYPE_ENUM:
        return _enum_name(fd)
    if fd.type in _64BIT:
        return str
    if fd.type in _INTS or fd.type in (FieldDescriptor.TYPE_BOOL, FieldDescriptor.TYPE_STRING):
        return lambda value: value
    raise ValueError(f"field {fd.full_name} of a type the log does not use")


def to_dict(msg: Message) -> dict[str, Any]:
    """``json_format.MessageToDict(msg, preserving_proto_field_name=True)``, faster."""
    desc = msg.DESCRIPTOR
    table = _writers.get(desc.full_name)
    if table is None:
        table = {fd.name: _writer(fd) for fd in desc.fields}
        _writers[desc.full_name] = table
    out: dict[str, Any] = {}
    for fd, value in msg.ListFields():
        write = table[fd.name]
        out[fd.name] = [write(v) for v in value] if fd.is_repeated else write(value)
    return out


_EPOCH = datetime.datetime(1970, 1, 1)
_MAX_SECONDS = 253402300799  # 9999-12-31T23:59:59Z, as Timestamp allows
_dates: dict[int, str] = {}
"""The date part of recent seconds: a decision's lines share their time, and a turn's
deadline (a few seconds on) comes back at every move."""
_MAX_DATES = 64


def timestamp_json(seconds: int, nanos: int) -> str:
    """``Timestamp.ToJsonString()`` of (seconds, nanos): RFC 3339 UTC with 0, 3, 6 or 9
    fractional digits, whichever shows the exact time; the date part is cached."""
    if not 0 <= seconds <= _MAX_SECONDS or not 0 <= nanos < 1_000_000_000:
        return Timestamp(seconds=seconds, nanos=nanos).ToJsonString()
    date = _dates.get(seconds)
    if date is None:
        if len(_dates) >= _MAX_DATES:
            _dates.clear()
        date = _dates[seconds] = (_EPOCH + datetime.timedelta(seconds=seconds)).isoformat()
    if nanos == 0:
        return date + "Z"
    if nanos % 1_000_000 == 0:
        return f"{date}.{nanos // 1_000_000:03d}Z"
    if nanos % 1000 == 0:
        return f"{date}.{nanos // 1000:06d}Z"
    return f"{date}.{nanos:09d}Z"


def _timestamp_value(value: Timestamp) -> str:
    return '"' + timestamp_json(value.seconds, value.nanos) + '"'


def _bool_value(value: bool) -> str:
    return "true" if value else "false"


def _int64_value(value: int) -> str:
    return f'"{value}"'


_JSON_SCALAR: dict[int, Callable[[Any], str]] = {
    **dict.fromkeys(_INTS, str),
    **dict.fromkeys(_64BIT, _int64_value),
    FieldDescriptor.TYPE_BOOL: _bool_value,
    FieldDescriptor.TYPE_STRING: encode_basestring,
}
"""How ``json.dumps`` writes one value of each scalar type the log uses (enums aside):
64-bit integers as strings, as ``MessageToDict`` makes them."""


def _json_value(fd: Any) -> Callable[[Any], str]:
    """How ``json.dumps(MessageToDict(...))`` writes one value of ``fd``."""
    if fd.type == FieldDescriptor.TYPE_MESSAGE:
        if fd.message_type is not None and fd.message_type.full_name == "google.protobuf.Timestamp":
            return _timestamp_value
        return to_json
    if fd.type == FieldDescriptor.TYPE_ENUM:
        assert fd.enum_type is not None
        names = {v.number: '"' + v.name + '"' for v in fd.enum_type.values}
        return lambda value: names.get(value) or str(value)
    if fd.type not in _JSON_SCALAR:
        raise ValueError(f"field {fd.full_name} of a type the log does not use")
    return _JSON_SCALAR[fd.type]


_encoders: dict[str, Callable[[Any], str]] = {}


def _encoder(desc: Any) -> Callable[[Any], str]:
    """The ``to_json`` of one message type, written out as Python source: a test per field
    in field-number order (``ListFields``' order, which ``MessageToDict`` keeps), no
    descriptor walk per message. A line's events and command go through these at every
    move. Presence as ``ListFields`` has it: ``HasField`` for message, oneof and optional
    fields, non-zero/non-empty for the others."""
    scope: dict[str, Any] = {}
    lines = ["def encode(m):", "    parts = []", "    add = parts.append"]
    # Every field in oneofs (Event, Command): ask each oneof which is set, once.
    oneofs_first = bool(desc.oneofs) and all(fd.containing_oneof is not None for fd in desc.fields)
    for o in desc.oneofs if oneofs_first else ():
        lines.append(f"    k_{o.name} = m.WhichOneof({o.name!r})")
    for i, fd in enumerate(sorted(desc.fields, key=lambda f: f.number)):
        write = _json_value(fd)
        scope[f"w{i}"] = write
        key = '"' + fd.name + '":'
        get = f"getattr(m, {fd.name!r})" if keyword.iskeyword(fd.name) else f"m.{fd.name}"
        if fd.is_repeated:
            lines += [
                f"    v = {get}",
                "    if v:",
                f"        add({key!r} + '[' + ','.join(map(w{i}, v)) + ']')",
            ]
        elif oneofs_first:
            lines += [
                f"    if k_{fd.containing_oneof.name} == {fd.name!r}:",
                f"        add({key!r} + w{i}({get}))",
            ]
        elif fd.has_presence:
            lines += [f"    if m.HasField({fd.name!r}):", f"        add({key!r} + w{i}({get}))"]
        else:
            lines += [f"    v = {get}", "    if v:", f"        add({key!r} + w{i}(v))"]
    lines.append("    return '{' + ','.join(parts) + '}'")
    exec("\n".join(lines), scope)  # source made from the descriptor's own names
    encode: Callable[[Any], str] = scope["encode"]
    _encoders[desc.full_name] = encode
    return encode


def to_json(msg: Message) -> str:
    """``json.dumps(to_dict(msg), separators=(",", ":"), ensure_ascii=False)``, written
    directly (the log's compact JSON of a message)."""
    desc = msg.DESCRIPTOR
    encode = _encoders.get(desc.full_name) or _encoder(desc)
    return encode(msg)
