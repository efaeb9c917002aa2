"""The layer rules docs/architecture.md states, read from the imports of the code.

Every import counts: at the top of a module, inside a function, under
``TYPE_CHECKING``. A rule broken here names the module and the import line.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "referee"

IN_PROCESS_REFEREE = {"referee/table/referees.py"}
"""The one door from the edges into the server: the referee a table hosts in its own
process (``LocalReferee``), which also hands on what the others need of that server."""
NOT_INTO_SERVER = (
    "referee/table",
    "referee/tournament",
    "referee/stdio",
    "referee/client",
    "referee/bots",
    "referee/organiser_command.py",
)
"""They speak gRPC to a referee through ``referee.client``, never reach into its server."""
CLIENT_MAY_IMPORT = ("referee.client", "referee.protocol", "referee.proto", "referee.text")
"""A bot process or ``referee organiser`` loads the wire and no more."""


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


def within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def breaks(paths: list[Path], allowed: set[str], forbidden: str) -> list[str]:
    return [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in paths
        if str(path.relative_to(ROOT)) not in allowed
        for line, name in imports(path)
        if within(name, forbidden)
    ]


def test_the_reader_of_imports_sees_every_form():
    """The rules below can fail: every form of import is seen, relative ones resolved,
    and a name that only begins like a module is not taken for it."""
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
        line for line, name in imports_in(text, "referee.table") if within(name, "referee.server")
    }
    assert found == {1, 2, 3, 4, 6}
    assert (8, "referee.table.bots") in set(imports_in(text, "referee.table"))
    # and the door itself goes through: the rules do not pass for want of imports
    assert breaks(modules(*IN_PROCESS_REFEREE), set(), "referee.server")


@pytest.mark.parametrize("root", NOT_INTO_SERVER)
def test_edges_reach_the_server_only_through_the_in_process_referee(root):
    assert breaks(modules(root), IN_PROCESS_REFEREE, "referee.server") == []


def test_the_client_imports_the_wire_and_no_more():
    wrong = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in modules("referee/client")
        for line, name in imports(path)
        if within(name, "referee") and not any(within(name, ok) for ok in CLIENT_MAY_IMPORT)
    ]
    assert wrong == []


def test_the_server_does_not_import_the_edges_built_on_it():
    for edge in ("referee.table", "referee.tournament", "referee.stdio", "referee.bots"):
        assert breaks(modules("referee/server"), set(), edge) == []


def test_the_rules_engine_is_pure():
    """``referee/rules`` knows nothing of the referee around it: no I/O, no protocol."""
    wrong = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in modules("referee/rules")
        for line, name in imports(path)
        if (within(name, "referee") and not within(name, "referee.rules"))
        or name.split(".")[0] in ("os", "io", "socket", "subprocess", "asyncio", "grpc", "pathlib")
    ]
    assert wrong == []


MAX_MODULE_LINES = 600
"""Past this a module holds more than one concern (docs/architecture.md)."""


def test_no_hand_written_module_is_over_600_lines():
    long = [
        f"{path.relative_to(ROOT)}: {lines} lines"
        for path in modules("referee")
        if "proto" not in path.relative_to(PACKAGE).parts[:1]
        and "migrations" not in path.parts
        and (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
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
