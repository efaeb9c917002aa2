"""The architecture, checked whole from the code: one layer table and one rule for every
import, and the few rules a layer cannot say (docs/architecture.md, "Layers").

Every import counts: at the top of a module, inside a function, under ``TYPE_CHECKING``.
A rule broken here names the module and the import line.
"""

from __future__ import annotations

import ast
import collections
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "referee"

SHARED, REFEREE, PLAYERS, BOTH = "shared", "referee", "players", "both"
"""A room's side of the wire: the referee's (it serves matches), the players' (what
plays matches at a referee: tables, tournaments, bots), both (the ladder, the command
line: they run referees and tables), or shared by all."""

LAYERS: tuple[tuple[str, dict[str, str]], ...] = (
    ("the base", {"referee": SHARED, "rules": SHARED, "text": SHARED, "durations": SHARED,
                  "proto": SHARED}),
    ("the wire", {"protocol": SHARED}),
    ("on the wire", {"match": SHARED, "client": SHARED, "files": SHARED, "pools": SHARED,
                     "extras": SHARED, "program": SHARED, "toml_table": SHARED}),
    ("built on them", {"log": SHARED, "service": SHARED, "bots": PLAYERS, "stdio": PLAYERS}),
    ("the jail, the server, a model", {"sandbox": SHARED, "server": REFEREE,
                                       "organiser_command": PLAYERS, "llm": PLAYERS}),
    ("a match's views, a table", {"view": SHARED, "table": PLAYERS}),
    ("the web, the backends", {"web": REFEREE, "backends": PLAYERS}),
    ("many matches", {"tournament": PLAYERS, "rl": PLAYERS}),
    ("measures", {"benchmark": PLAYERS, "openspiel": PLAYERS}),
    ("the ladder", {"ladder": BOTH}),
    ("the people", {"cli": BOTH}),
)  # fmt: skip
"""Lowest first. The rule: a room imports only rooms of the layers below its own, on its
side of the wire or shared; rooms of one layer never import each other."""

DOORS = {("referee/table/referees.py", "server")}
"""The one door from the players' side into the referee's: the referee a table hosts in
its own process (``LocalReferee``), which also hands on what the others need of it (its
lobby and assignments, its listener's TLS and gRPC options)."""

CHANNEL_OPENERS = ("client", "server")
"""Only these rooms open gRPC channels; everything else connects through ``client``."""
OPEN_CHANNEL = {"insecure_channel", "secure_channel"}

MAX_MODULE_LINES = 600
"""Past this a module holds more than one concern (docs/architecture.md)."""
MAX_CLASS_LINES = 500
"""A class with its own base classes: past this it holds more than one role."""
SHARED_NAMES = {"add_parser", "main"}
"""Public names many modules define by design: a CLI family's parser, a program's entry."""


def room_of_module(name: str) -> str | None:
    """``referee.server.app`` -> ``server``; ``referee`` itself (its version) is a room."""
    parts = name.split(".")
    if parts[0] != "referee":
        return None
    if len(parts) == 1 or parts[1] == "__version__":
        return "referee"
    return parts[1]


def room_of(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return "referee" if rel.parts == ("__init__.py",) else rel.with_suffix("").parts[0]


PLACE = {room: (i, side) for i, (_, rooms) in enumerate(LAYERS) for room, side in rooms.items()}


def allowed(source: str, target: str) -> bool:
    """The rule."""
    if source == target:
        return True
    (low, to_side), (high, from_side) = PLACE[target], PLACE[source]
    return low < high and (to_side == SHARED or from_side in (BOTH, to_side))


def imports(path: Path) -> Iterator[tuple[int, str]]:
    """Each module ``path`` imports (line, dotted name), relative imports resolved."""
    module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    return imports_in(path.read_text(encoding="utf-8"), package)


def imports_in(text: str, package: str) -> Iterator[tuple[int, str]]:
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}".rstrip(".")
            yield node.lineno, base
            for alias in node.names:  # ``from referee import server`` names a module too
                yield node.lineno, f"{base}.{alias.name}"


def modules(*roots: str) -> list[Path]:
    found: list[Path] = []
    for root in roots:
        path = ROOT / root
        found += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return found


def house() -> list[Path]:
    """The hand-written modules (not the generated ``proto`` or the migrations)."""
    return [
        p
        for p in modules("referee")
        if room_of(p) != "proto" and "migrations" not in p.relative_to(PACKAGE).parts
    ]


def breaks(paths: list[Path]) -> list[str]:
    """The imports of ``paths`` the rule forbids (doors aside)."""
    wrong = []
    for path in paths:
        source, rel = room_of(path), path.relative_to(ROOT).as_posix()
        for line, name in imports(path):
            target = room_of_module(name)
            if target is None or target not in PLACE or (rel, target) in DOORS:
                continue
            if not allowed(source, target):
                wrong.append(f"{rel}:{line} imports {name} ({source} may not import {target})")
    return wrong


def test_the_reader_of_imports_sees_every_form():
    """The rule can fail: every form of import is seen, relative ones resolved, and a
    name that only begins like a module is not taken for it."""
    text = (
        "import referee.server.app\n"
        "from referee.server import lobby\n"
        "from referee import server\n"
        "from ..server.tls import ServerTls\n"
        "def later():\n    from ..server import auth\n"
        "import referee.serverless\n"
        "from . import bots\n"
    )
    found = {
        line for line, name in imports_in(text, "referee.table") if room_of_module(name) == "server"
    }
    assert found == {1, 2, 3, 4, 6}
    assert (8, "referee.table.bots") in set(imports_in(text, "referee.table"))
    # and the door itself goes through: the rule does not pass for want of imports
    door = [p for p in modules("referee/table") if p.name == "referees.py"]
    assert any(room_of_module(n) == "server" for _, n in imports(door[0]))
    assert not allowed("table", "server") and not allowed("server", "table")
    assert not allowed("tournament", "server") and allowed("web", "server")
    assert not allowed("client", "files") and not allowed("view", "table")


def test_every_room_of_the_house_has_its_place_in_the_layer_table():
    rooms = {room_of(p) for p in modules("referee")}
    assert sorted(rooms - set(PLACE)) == [], "place each new room in LAYERS"
    assert sorted(set(PLACE) - rooms) == [], "a room of LAYERS that is gone"


def test_every_import_follows_the_layer_table():
    """A room imports only rooms of the layers below its own, on its side of the wire or
    shared; the door aside, nothing of the players' side reaches into the server, and
    the server imports nothing of the players' side."""
    assert breaks(house()) == []


def test_the_rule_says_what_the_old_rules_said():
    """The pairs the house forbade one by one before the table (31 of them), each now a
    consequence of the rule; in all it forbids 536 of the 930 ordered pairs of rooms."""
    players = ("table", "tournament", "stdio", "client", "bots", "organiser_command")
    assert not any(allowed(room, "server") for room in players)
    assert not any(allowed("server", room) for room in ("table", "tournament", "stdio", "bots"))
    assert not any(allowed("rules", room) for room in PLACE if room != "rules")
    forbidden = [(a, b) for a in PLACE for b in PLACE if a != b and not allowed(a, b)]
    assert len(forbidden) >= 536


def test_the_client_loads_the_wire_and_no_more():
    """A bot process or ``referee organiser`` imports the client: it brings the wire
    (and the rules the wire carries), never the house around it."""
    below = {r for r in PLACE if allowed("client", r)}
    assert below <= {"client", "protocol", "proto", "rules", "text", "durations", "referee"}


def test_only_the_client_and_the_server_open_grpc_channels():
    wrong = []
    for path in house():
        if room_of(path) in CHANNEL_OPENERS:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in OPEN_CHANNEL:
                wrong.append(f"{path.relative_to(ROOT)}:{node.lineno} opens a channel")
    assert wrong == []


def test_no_private_name_is_imported_across_rooms():
    """``_name`` is a module's own: another room that needs it asks for a public name."""
    wrong = []
    for path in house():
        package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}".rstrip(".")
            if room_of_module(base) in (None, room_of(path)):
                continue
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    wrong.append(f"{path.relative_to(ROOT)}:{node.lineno} takes {alias.name}")
    assert wrong == []


def definitions() -> dict[str, list[str]]:
    """Where each public top-level class and function of the house is defined, by name."""
    found: dict[str, list[str]] = collections.defaultdict(list)
    kinds = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    for path in house():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, kinds) and not node.name.startswith("_"):
                found[node.name].append(str(path.relative_to(ROOT)))
    return found


def test_no_two_public_classes_or_functions_share_a_name():
    """Catching one ``LogTooLarge`` missed the other: one name, one thing."""
    twice = {
        name: places
        for name, places in definitions().items()
        if len(places) > 1 and name not in SHARED_NAMES
    }
    assert twice == {}


def test_no_class_is_over_500_lines_counting_its_own_base_classes():
    """A class spread over a base in another file to pass the module size is still one
    class: counted with the house's own classes it is built on."""
    classes: dict[str, tuple[int, list[str]]] = {}
    for path in house():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                assert node.end_lineno is not None
                bases = [ast.unparse(b).split("[")[0].rsplit(".", 1)[-1] for b in node.bases]
                key = f"{path.relative_to(ROOT)}:{node.name}"
                classes[key] = (node.end_lineno - node.lineno + 1, bases)
    by_name = {key.rsplit(":", 1)[1]: key for key in classes}  # names are unique (above)

    def size(key: str, seen: frozenset[str] = frozenset()) -> int:
        lines, bases = classes[key]
        return lines + sum(
            size(by_name[b], seen | {key}) for b in bases if b in by_name and by_name[b] not in seen
        )

    long = {key: n for key in classes if (n := size(key)) > MAX_CLASS_LINES}
    assert long == {}


def test_no_hand_written_module_is_over_600_lines():
    long = [
        f"{path.relative_to(ROOT)}: {lines} lines"
        for path in house()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    ]
    assert long == []


def test_every_package_and_module_of_the_house_is_placed_in_the_architecture():
    """docs/architecture.md describes the house as it is: each package, each top module."""
    text = (ROOT / "docs/architecture.md").read_text(encoding="utf-8")
    rooms = [p for p in sorted(PACKAGE.iterdir()) if p.is_dir() and (p / "__init__.py").exists()]
    rooms += [p for p in sorted(PACKAGE.glob("*.py")) if p.name != "__init__.py"]
    missing = []
    for room in rooms:
        rel = room.relative_to(ROOT).as_posix()
        named = [rel + "/", rel, f"`{room.name}`"]
        if not any(n in text for n in named):
            missing.append(rel)
    assert missing == []


def layer_picture() -> str:
    """The layer table as docs/architecture.md shows it: one line a layer, top first."""
    rows = [("", "the referee's side", "shared", "the players' side")]
    for name, rooms in reversed(LAYERS):
        cells = {side: " ".join(sorted(r for r, s in rooms.items() if s == side)) for side in
                 (REFEREE, SHARED, PLAYERS, BOTH)}  # fmt: skip
        shared = cells[SHARED] or (cells[BOTH] + " (both sides)" if cells[BOTH] else "")
        rows.append((name, cells[REFEREE], shared, cells[PLAYERS]))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return "\n".join(
        " | ".join(cell.ljust(w) for cell, w in zip(row, [*widths, 0], strict=True)).rstrip()
        for row in rows
    )


def test_the_architecture_shows_the_layer_table_as_it_is():
    text = (ROOT / "docs/architecture.md").read_text(encoding="utf-8")
    assert layer_picture() in text, "paste tests/test_layers.py's layer_picture() there:\n" + (
        layer_picture()
    )
