"""Every relative link of the user's documentation reaches a file of the checkout, and
every ``#anchor`` a heading of it; no page cites a file users do not have (issue 31,
item 8: docs/rl.md cited "RULES.md 1.1", the developers' rules contract)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(
    {
        ROOT / "README.md",
        *ROOT.glob("docs/*.md"),
        *ROOT.glob("clients/*/README.md"),
        *ROOT.glob("examples/**/*.md"),
        *ROOT.glob("docker/*.md"),
    }
)
NOT_SHIPPED = ("RULES.md", "STYLE.md", "HELPERS.md")
"""The developers' own files, outside the checkout."""


def prose(path: Path) -> str:
    """The page without its code blocks (where ``](`` means something else)."""
    return re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_relative_links_reach_a_file_and_a_heading():
    broken = []
    for page in PAGES:
        for target in re.findall(r"\]\(([^)\s]+)\)", prose(page)):
            if re.match(r"^[a-z]+:", target):
                continue  # http:, mailto:
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}: no such file")
            elif anchor and dest.suffix == ".md":
                headings = re.findall(r"^#+ (.*)$", prose(dest), flags=re.M)
                if anchor not in {slug(h) for h in headings}:
                    broken.append(f"{page.relative_to(ROOT)}: {target}: no such heading")
    assert broken == []


def test_no_page_cites_a_file_users_do_not_have():
    cited = [
        f"{page.relative_to(ROOT)}: {name}"
        for page in PAGES
        for name in NOT_SHIPPED
        if name in page.read_text(encoding="utf-8")
    ]
    assert cited == []
