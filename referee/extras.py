"""The optional extras of pyproject.toml, and the one line a command prints when the
extra it needs is not installed.

A command of an extra imports the extra's packages when it runs (``referee --help`` and
every other command load none of them). A package that is missing then surfaces as a
``ModuleNotFoundError`` from deep inside the command; ``referee.cli.main`` turns it into
``missing_line``'s line (exit 2) for every command at once, so no command of any extra
shows a user a traceback for a package they did not install.

>>> extra_of("sqlalchemy.engine")
'ladder'
>>> extra_of("referee.nothing") is None
True
>>> print(install_hint("ray"))
pip install "pusoy-referee[ray]"
"""

from __future__ import annotations

EXTRAS: dict[str, tuple[str, ...]] = {
    "ladder": ("sqlalchemy", "alembic"),
    "postgres": ("psycopg", "psycopg_binary"),
    "rl": ("gymnasium", "pettingzoo", "pyarrow", "pusoy_client"),
    "ray": ("ray",),
    "openspiel": ("pyspiel", "open_spiel", "absl"),
}
"""Each extra and the top-level packages that only it brings (the referee itself
imports the Python kit, ``pusoy_client``, only for the rl extra's encoder, which the
policy anchor of the benchmark plays on too)."""

KIT_NUMPY = '"clients/python[numpy]"'
"""The Python kit with its numpy extra: the rl extra's encoder lives there."""


def extra_of(module: str | None) -> str | None:
    """The extra that installs ``module`` (a dotted name), or None."""
    if not module:
        return None
    for extra, packages in EXTRAS.items():
        for package in packages:
            if module == package or module.startswith(package + "."):
                return extra
    return None


def install_hint(extra: str) -> str:
    """How to install ``extra`` (a source checkout's ``./scripts/setup`` installs all)."""
    hint = f'pip install "pusoy-referee[{extra}]"'
    if extra == "rl":
        hint += f" and the Python kit with numpy, pip install {KIT_NUMPY}"
    return hint


def missing_line(command: str, exc: ModuleNotFoundError) -> str | None:
    """``referee ladder init: sqlalchemy is missing: this command needs the ladder extra,
    pip install ...``, or None when the missing module is no extra's (a real bug, left
    to raise)."""
    extra = extra_of(exc.name)
    if extra is None:
        return None
    return (
        f"{command}: {exc.name} is missing: this command needs the {extra} extra, "
        f"{install_hint(extra)}"
    )


__all__ = ["EXTRAS", "extra_of", "install_hint", "missing_line"]
