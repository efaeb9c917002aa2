"""A dataclass field declared once, with what every form that carries it needs (its
default, its command-line option and help): ``MatchSettings``' settings, ``ServerLimits``'
limits. The flags and the tables of those forms are made from the declarations."""

from __future__ import annotations

import dataclasses
from typing import Any, Self, TypeVar

_DECLARED = "declared"
_D = TypeVar("_D", bound="Declared")


@dataclasses.dataclass(frozen=True, slots=True)
class Declared:
    """One declared field; ``name`` is filled in once its class exists (``declared``)."""

    name: str
    default: int
    help: str
    """What it means, for ``--help``."""
    flag: str
    """Its command-line option; "" for none."""
    metavar: str

    @property
    def dest(self) -> str:
        """The flag's argparse destination."""
        return self.flag.removeprefix("--").replace("-", "_")

    def field(self) -> Any:
        """The dataclass field that carries this declaration, with its default."""
        return dataclasses.field(default=self.default, metadata={_DECLARED: self})

    def named(self, name: str) -> Self:
        """This declaration as the field ``name``'s."""
        return dataclasses.replace(self, name=name)


def declared(cls: type, kind: type[_D]) -> tuple[_D, ...]:
    """The fields of the dataclass ``cls`` declared as ``kind``, in order, named."""
    specs = ((f.name, f.metadata.get(_DECLARED)) for f in dataclasses.fields(cls))
    return tuple(spec.named(name) for name, spec in specs if isinstance(spec, kind))


__all__ = ["Declared", "declared"]
