"""Parse once, run every enabled rule over the shared context, filter noqa, apply fixes."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import libcst as cst

from jaxloopfix.analysis.cross_module import ModuleLinks
from jaxloopfix.analysis.source import ParsedModule
from jaxloopfix.config import Settings
from jaxloopfix.diagnostics import Diagnostic, Edit
from jaxloopfix.prefilter import Reduced, SyntaxProblem, analysed_digest, scan
from jaxloopfix.rewrite.edits import apply_edits, overlaps
from jaxloopfix.rules import ALL_RULES, FileContext, Rule

MAX_FIX_PASSES = 50
NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:[,\s]+[A-Za-z]+[0-9]+)*))?", re.IGNORECASE)


class ParseError(Exception):
    """The source is not valid Python (or too deeply nested to parse)."""

    def __init__(self, message: str, row: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.row = row
        self.column = column


class RuleError(Exception):
    """A rule raised: a bug in jaxloopfix, reported instead of crashing the run."""


def parse(text: str, filename: str, reduced: Reduced | None = None, ast_tree: ast.Module | None = None) -> ParsedModule:
    """`ast_tree`: the stdlib parser's tree of `text`, when the pre-filter made one."""
    try:
        if reduced is not None:
            return ParsedModule(reduced.text, filename, reduced.hidden, reduced.bound)
        return ParsedModule(text, filename, ast_tree=ast_tree)
    except cst.ParserSyntaxError as exc:
        return _raise_parse(exc)
    except RecursionError:
        raise ParseError("the code is nested too deeply to analyse") from None


def _raise_parse(exc: cst.ParserSyntaxError) -> ParsedModule:
    message = exc.message.splitlines()[0] if exc.message else "invalid syntax"
    raise ParseError(f"SyntaxError: {message}", exc.raw_line, exc.raw_column + 1) from None


def is_suppressed(diagnostic: Diagnostic, lines: list[str]) -> bool:
    row = diagnostic.location.row
    if row > len(lines):
        return False
    match = NOQA.search(lines[row - 1])
    if match is None:
        return False
    codes = match.group("codes")
    if codes is None:
        return True
    return diagnostic.code.upper() in {c.upper() for c in re.split(r"[,\s]+", codes) if c}


@dataclass
class ModuleLint:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # What the project pass learns from this module (with `settings.site`).
    links: ModuleLinks = field(default_factory=ModuleLinks)
    # The digest of the code the analysis read (`analysed_digest`), when this result holds
    # for any text that leaves that code as it is: None when it has diagnostics.
    analysed: str | None = None
    # Whether libcst parsed the text here: this process now holds its syntax (`analysis.source`).
    parsed: bool = False


def lint_text(text: str, filename: str, settings: Settings, *, prefilter: bool = True) -> list[Diagnostic]:
    """Diagnostics for one source text; `prefilter=False` skips the fast path (for testing it)."""
    return lint_module(text, filename, settings, prefilter=prefilter).diagnostics


def lint_module(
    text: str,
    filename: str,
    settings: Settings,
    *,
    prefilter: bool = True,
    answers: Callable[[str], ModuleLint | None] | None = None,
    digest: bool = False,
) -> ModuleLint:
    """Diagnostics for one source text, and where its traced code leads in the project.

    `answers(digest)` gives a result known for the code the analysis would read (see
    `analysed_digest`), or None: then the text is analysed. With `digest` (a caller that
    stores results by that code) a result without diagnostics carries its digest
    (`ModuleLint.analysed`); it is computed only for such callers and `answers`."""
    rules = [rule for rule in ALL_RULES if settings.is_enabled(rule.code, filename)]
    site = settings.site
    reduced = None
    tree = None
    code: str | None = None  # the digest of the code the analysis reads, when asked for
    try:
        need_loop = all(rule.needs_loop for rule in rules)
        if prefilter:
            found = scan(
                text,
                settings.extra_traced_decorators,
                settings.extra_traced_base_classes,
                need_loop=need_loop,
                seeds=frozenset(seed.name for seed in site.seeds) if site is not None else frozenset(),
                project_roots=site.roots if site is not None else None,
                class_flow=site.class_flow if site is not None else True,
            )
            if found is None:
                return ModuleLint()
            tree = found.tree
            wanted = digest or answers is not None
            # A module analysed whole needs its reduction for the digest alone (`Scan.whole`).
            reduced = found.reduce(text) if wanted or not found.whole else None
            if wanted:
                code = analysed_digest(reduced.text if reduced is not None else text)
            if found.whole:
                reduced = None  # analysed whole, the same text in every round
    except SyntaxProblem as exc:
        raise ParseError(exc.message, exc.row, exc.column) from None
    if not rules and site is None:
        return ModuleLint()
    known = answers(code) if answers is not None and code is not None else None
    if known is not None:
        return known
    if reduced is not None:
        linted = _lint_parsed(parse(text, filename, reduced), rules, settings)
        restored = _restore_fixes(linted.diagnostics, reduced)
        if restored is not None:
            linted.diagnostics = restored
            return _digested(linted, code)
    return _digested(_lint_parsed(parse(text, filename, ast_tree=tree), rules, settings), code)


def _digested(linted: ModuleLint, digest: str | None) -> ModuleLint:
    """`linted`, marked reusable for the code of `digest` when it has no diagnostics."""
    if not linted.diagnostics:
        linted.analysed = digest
    return linted


def _restore_fixes(diagnostics: list[Diagnostic], reduced: Reduced) -> list[Diagnostic] | None:
    """Fixes computed on the reduced text, as fixes of the original (None: analyse the whole text)."""
    out = []
    for diagnostic in diagnostics:
        if diagnostic.fix is not None:
            edits = reduced.map_edits(diagnostic.fix.edits)
            if edits is None:
                return None
            diagnostic = replace(diagnostic, fix=replace(diagnostic.fix, edits=edits))
        out.append(diagnostic)
    return out


def _lint_parsed(parsed: ParsedModule, rules: list[type[Rule]], settings: Settings) -> ModuleLint:
    filename = parsed.filename
    site = settings.site
    context = FileContext(parsed, settings)
    diagnostics: list[Diagnostic] = []
    for rule in rules:
        try:
            diagnostics.extend(rule().check(context))
        except RecursionError:
            raise ParseError("the code is nested too deeply to analyse") from None
        except Exception as exc:
            raise RuleError(f"{rule.code} failed on {filename}: {type(exc).__name__}: {exc}") from exc
    lines = parsed.lines
    diagnostics = [d for d in diagnostics if not is_suppressed(d, lines)]
    diagnostics.sort(key=lambda d: (d.location.row, d.location.column, d.code))
    try:
        links = context.links if site is not None else ModuleLinks()
    except RecursionError:
        raise ParseError("the code is nested too deeply to analyse") from None
    return ModuleLint(diagnostics, links, parsed=True)


def apply_fixes(
    text: str,
    filename: str,
    settings: Settings,
    *,
    unsafe: bool = False,
    accept: Callable[[Diagnostic], bool] | None = None,
) -> tuple[str, list[Diagnostic], int]:
    """Apply fixes until none applies; overlapping fixes wait for the next pass.

    `accept` restricts which diagnostics may be fixed (e.g. only verified functions)."""
    applied = 0
    for _ in range(MAX_FIX_PASSES):
        diagnostics = lint_text(text, filename, settings)
        chosen: list[Edit] = []
        count = 0
        for diagnostic in diagnostics:
            if not diagnostic.fix_applies(unsafe) or (accept is not None and not accept(diagnostic)):
                continue
            edits = diagnostic.fix.edits  # type: ignore[union-attr]
            if overlaps(edits, chosen):
                continue
            chosen.extend(edits)
            count += 1
        if not count:
            return text, diagnostics, applied
        new_text = apply_edits(text, chosen)
        if new_text == text:
            return text, diagnostics, applied
        text = new_text
        applied += count
    return text, lint_text(text, filename, settings), applied
