"""The viewer's script is built from its parts (scripts/build_viewer.py), and what it says
of the data matches the fold that makes the data: every default cause the fold can write
has the viewer's words."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from referee.protocol.names import DEFAULT_CAUSE
from referee.view.page import asset

ROOT = Path(__file__).resolve().parents[2]
PARTS = ROOT / "referee" / "view" / "assets" / "viewer"


def build() -> str:
    spec = importlib.util.spec_from_file_location("build_viewer", ROOT / "scripts/build_viewer.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text: str = module.build()
    return text


def test_the_inlined_script_is_the_join_of_its_parts():
    """Edit a part, then run scripts/build_viewer.py: the page inlines viewer.js."""
    assert asset("viewer.js") == build()
    assert len(list(PARTS.glob("*.js"))) > 1


def test_every_default_cause_of_the_fold_has_the_viewers_words():
    """The fold writes a move's default cause by its name (``DEFAULT_CAUSE``); the viewer
    turns each name into words, and a name it did not know would be shown raw."""
    script = "".join(p.read_text(encoding="utf-8") for p in sorted(PARTS.glob("*.js")))
    found = re.search(r"var CAUSES = \{(.*?)\};", script, re.S)
    assert found is not None
    causes = dict(re.findall(r"(\w+): '([^']+)'", found.group(1)))
    assert set(causes) == set(DEFAULT_CAUSE.names.values())
    assert all(words and words != name for name, words in causes.items())
