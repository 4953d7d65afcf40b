"""The README and the pages of ``docs/`` as a user reads them: every link to a file of the repository leads to
one, the README stays short enough to read in ten minutes, and neither tells the project's history. (The
README's examples run in ``tests/blender/addon/test_readme.py``.) Pure Python."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
#: A Markdown link or picture: its target, up to a ``#section``.
_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_link_to_a_file_leads_to_one(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    local = [link for link in _LINK.findall(text) if "://" not in link]
    missing = [link for link in local if not (page.parent / link).exists()]
    assert not missing, f"{page.name} links to files that do not exist: {missing}"


def test_the_docs_pages_exist_and_the_readme_links_each() -> None:
    readme = PAGES[0].read_text(encoding="utf-8")
    assert len(PAGES) >= 6
    for page in PAGES[1:]:
        assert f"docs/{page.name}" in readme, f"the README does not link {page.name}"


def test_the_readme_is_short() -> None:
    assert len(PAGES[0].read_text(encoding="utf-8").splitlines()) < 400


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_no_page_tells_the_projects_history(page: Path) -> None:
    text = " ".join(page.read_text(encoding="utf-8").split())
    told = re.findall(r"\b(?:this|last|earlier|previous) turn\b|\bearlier versions\b", text, flags=re.I)
    assert not told, f"{page.name}: {told}"
