"""Each rule's documentation as a Markdown page shipped inside the package.

Why files: an editor links a diagnostic's code to a page (LSP `codeDescription.href` must be a
URI), and the project publishes no documentation site. A `file:` URI of a page installed with the
package opens in the editor, offline and at the installed version. The pages are generated from the
rules' docstrings (`rule_documentation`, what `jaxloopfix rule CODE` prints and hover shows), so
there is one source; `python -m jaxloopfix.rules.pages` rewrites them and a test keeps them equal.
"""

from __future__ import annotations

import sys
from pathlib import Path

from jaxloopfix.rules import RULES_BY_CODE, rule_documentation

PAGES = Path(__file__).with_name("pages")


def page_path(code: str) -> Path | None:
    """The installed page of rule `code`, or None for a code that is no rule or a page missing."""
    rule = RULES_BY_CODE.get(code)
    if rule is None:
        return None
    path = PAGES / f"{rule.code}.md"
    return path if path.is_file() else None


def page_uri(code: str) -> str | None:
    """The `file:` URI of rule `code`'s page, for links from editors and reports."""
    path = page_path(code)
    return None if path is None else path.resolve().as_uri()


def expected_pages() -> dict[str, str]:
    """File name -> text of every page, as generated from the rules now."""
    return {f"{code}.md": rule_documentation(rule) + "\n" for code, rule in sorted(RULES_BY_CODE.items())}


def write_pages(folder: Path = PAGES) -> list[str]:
    """Write every page that differs from its rule (and drop pages of rules that are gone); the names written."""
    folder.mkdir(exist_ok=True)
    expected = expected_pages()
    changed = []
    for name, text in expected.items():
        path = folder / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            changed.append(name)
    for stale in sorted(folder.glob("*.md")):
        if stale.name not in expected:
            stale.unlink()
            changed.append(stale.name)
    return changed


if __name__ == "__main__":
    written = write_pages()
    print("\n".join(written) if written else "rule pages up to date", file=sys.stderr)
