"""files.py: exact byte round trips, safe atomic writes, refusing non-source files, discovery."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings as hyp_settings, strategies as st

from jaxloopfix.config import Settings
from jaxloopfix.files import (
    FileTooLargeError,
    GitIgnore,
    SourceError,
    StaleFileError,
    decode_source,
    discover,
    read_source,
    write_source_atomic,
)

# --------------------------------------------------------------------------- round trip

ROUND_TRIP_CASES = {
    "crlf": b"import jax\r\n\r\ndef f(x):\r\n    return x\r\n",
    "bom": b"\xef\xbb\xbfimport jax\nx = '\xc3\xa9'\n",
    "bom_crlf": b"\xef\xbb\xbfx = 1\r\ny = 2\r\n",
    "tabs": b"def f(x):\n\tfor i in range(3):\n\t\tx = x + i\n\treturn x\n",
    "cp1252_cookie": b"# -*- coding: cp1252 -*-\nname = 'caf\xe9 \x80'\n",
    "latin1_cookie_line2": b"#!/usr/bin/env python\n# vim: set fileencoding=latin-1 :\ns = '\xff'\n",
    "no_final_newline": b"x = 1\ny = 2",
    "trailing_whitespace": b"x = 1   \ny = 2\t \n   \n",
    "mixed_endings": b"a = 1\r\nb = 2\nc = 3\rd = 4\n",
    "form_feed": b"a = 1\n\x0c\nb = 2\n",
    "empty": b"",
    "only_newlines": b"\n\n\r\n",
    "utf8_non_ascii": "s = '日本語 ü ∑'\n".encode(),
}


@pytest.mark.parametrize("raw", ROUND_TRIP_CASES.values(), ids=ROUND_TRIP_CASES.keys())
def test_read_encode_round_trip_is_byte_exact(tmp_path: Path, raw: bytes) -> None:
    path = tmp_path / "mod.py"
    path.write_bytes(raw)
    source = read_source(path)
    assert source.raw == raw
    assert source.path == path
    assert source.encode(source.text) == raw


def test_crlf_is_not_translated(tmp_path: Path) -> None:
    path = tmp_path / "mod.py"
    path.write_bytes(ROUND_TRIP_CASES["crlf"])
    assert "\r\n" in read_source(path).text


def test_bom_is_stripped_from_text_and_restored_on_encode(tmp_path: Path) -> None:
    path = tmp_path / "mod.py"
    path.write_bytes(ROUND_TRIP_CASES["bom"])
    source = read_source(path)
    assert source.encoding == "utf-8-sig"
    assert not source.text.startswith("\ufeff")
    assert "é" in source.text
    assert source.encode("y = 2\n") == b"\xef\xbb\xbfy = 2\n"


def test_coding_cookie_is_honoured(tmp_path: Path) -> None:
    path = tmp_path / "mod.py"
    path.write_bytes(ROUND_TRIP_CASES["cp1252_cookie"])
    source = read_source(path)
    assert source.encoding == "cp1252"
    assert "café €" in source.text
    assert source.encode(source.text.replace("café", "thé")) == ROUND_TRIP_CASES["cp1252_cookie"].replace(
        b"caf\xe9", b"th\xe9"
    )


def test_decode_source_works_on_bytes_without_a_file() -> None:
    source = decode_source(b"x = 1\r\n", "-")
    assert source.text == "x = 1\r\n"
    assert source.path == Path("-")


@hyp_settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(st.text(alphabet=st.characters(blacklist_characters="\r\n\0", blacklist_categories=("Cs",)))),
    endings=st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=1),
    bom=st.booleans(),
)
def test_round_trip_property(lines: list[str], endings: list[str], bom: bool) -> None:
    text = "".join(line + endings[i % len(endings)] for i, line in enumerate(lines))
    raw = (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8")
    try:
        source = decode_source(raw, "x.py")
    except SourceError:
        # e.g. a generated line that looks like a coding cookie for another codec
        return
    assert source.encode(source.text) == raw


# Bytes that UTF-8 decoders disagree on: overlong forms, encoded surrogates, code points over
# U+10FFFF, lone continuation bytes, truncated sequences, and a second BOM after the first.
_TRICKY_BYTES = [b"\xc0\xaf", b"\xe0\x80\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80", b"\xe2\x82",
                 b"\xef\xbb\xbf", "é€𝄞".encode(), b"\r\n", b"\n", b"x = '", b"# coding: utf-8\n"]


@hyp_settings(max_examples=300, deadline=None)
@given(
    head=st.sampled_from([b"", b"\xef\xbb\xbf", b"# -*- coding: utf8 -*-\n", b"\xef\xbb\xbf# coding: utf-8\n"]),
    body=st.lists(st.one_of(st.sampled_from(_TRICKY_BYTES), st.binary(max_size=6))),
)
def test_every_accepted_file_encodes_back_to_its_bytes(head: bytes, body: list[bytes]) -> None:
    """Whatever the bytes, a file `decode_source` accepts encodes back to exactly them: a fix
    written back changes nothing but its edits (UTF-8 files are not encoded again to check)."""
    raw = head + b"".join(body)
    try:
        source = decode_source(raw, "x.py")
    except SourceError:
        return
    assert source.encode(source.text) == raw


# --------------------------------------------------------------------------- refusals


def test_binary_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "blob.py"
    path.write_bytes(b"x = 1\n\x00\x01\x02")
    with pytest.raises(SourceError) as info:
        read_source(path)
    assert "NUL" in info.value.file_error.message
    assert info.value.file_error.filename == str(path)
    assert not isinstance(info.value, FileTooLargeError)


def test_too_large_file_is_skipped_with_its_size(tmp_path: Path) -> None:
    path = tmp_path / "big.py"
    path.write_bytes(b"x = 1\n" * 100)
    with pytest.raises(FileTooLargeError) as info:
        read_source(path, max_file_size=599)
    assert info.value.message.startswith("skipped: file is 600 bytes, over max-file-size")
    # exactly at the limit is fine
    assert read_source(path, max_file_size=600).text.count("\n") == 100


def test_too_large_wins_over_binary(tmp_path: Path) -> None:
    # a huge data file is skipped (warning), not reported as a broken source (error)
    path = tmp_path / "data.py"
    path.write_bytes(b"\x00" * 50)
    with pytest.raises(FileTooLargeError):
        read_source(path, max_file_size=10)


def test_undecodable_utf8_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.py"
    path.write_bytes(b"x = '\xff\xfe'\n")
    with pytest.raises(SourceError, match="cannot decode"):
        read_source(path)
    path.write_bytes(b"x = 1\ny = 2\nz = '\xff'\n")  # past the lines the cookie may be on
    with pytest.raises(SourceError, match="cannot decode as utf-8"):
        read_source(path)


def test_undecodable_in_declared_encoding_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.py"
    path.write_bytes(b"# coding: cp1252\nx = '\x81'\n")  # 0x81 is undefined in cp1252
    with pytest.raises(SourceError, match="cp1252"):
        read_source(path)


def test_unknown_coding_cookie_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.py"
    path.write_bytes(b"# -*- coding: no-such-codec -*-\nx = 1\n")
    with pytest.raises(SourceError, match="no-such-codec"):
        read_source(path)


def test_empty_file_is_fine(tmp_path: Path) -> None:
    path = tmp_path / "empty.py"
    path.write_bytes(b"")
    source = read_source(path, max_file_size=0)
    assert source.text == ""
    assert source.encoding == "utf-8"


def test_missing_file_is_a_source_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="cannot read"):
        read_source(tmp_path / "nope.py")


# --------------------------------------------------------------------------- atomic write


def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if "jaxloopfix-tmp" in p.name)


def test_atomic_write_replaces_content_and_keeps_mode(tmp_path: Path) -> None:
    path = tmp_path / "mod.py"
    path.write_bytes(b"x = 1\r\n")
    os.chmod(path, 0o640)
    source = read_source(path)
    write_source_atomic(source, source.text.replace("1", "2"))
    assert path.read_bytes() == b"x = 2\r\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert _leftovers(tmp_path) == []


def test_atomic_write_keeps_bom_and_cp1252(tmp_path: Path) -> None:
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbfx = 1\n")
    write_source_atomic(read_source(bom), "x = 'é'\n")
    assert bom.read_bytes() == b"\xef\xbb\xbfx = '\xc3\xa9'\n"

    legacy = tmp_path / "legacy.py"
    legacy.write_bytes(b"# coding: cp1252\nx = 1\n")
    write_source_atomic(read_source(legacy), "# coding: cp1252\nx = 'é'\n")
    assert legacy.read_bytes() == b"# coding: cp1252\nx = '\xe9'\n"


def test_atomic_write_refuses_stale_file(tmp_path: Path) -> None:
    path = tmp_path / "mod.py"
    path.write_bytes(b"x = 1\n")
    source = read_source(path)
    path.write_bytes(b"x = 1  # edited meanwhile\n")
    with pytest.raises(StaleFileError) as info:
        write_source_atomic(source, "x = 2\n")
    assert "changed on disk" in info.value.file_error.message
    assert path.read_bytes() == b"x = 1  # edited meanwhile\n"
    assert _leftovers(tmp_path) == []


def test_atomic_write_refuses_deleted_file(tmp_path: Path) -> None:
    path = tmp_path / "mod.py"
    path.write_bytes(b"x = 1\n")
    source = read_source(path)
    path.unlink()
    with pytest.raises(StaleFileError):
        write_source_atomic(source, "x = 2\n")
    assert not path.exists()


def test_atomic_write_unencodable_text_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "legacy.py"
    raw = b"# coding: cp1252\nx = 1\n"
    path.write_bytes(raw)
    with pytest.raises(SourceError, match="cannot be encoded"):
        write_source_atomic(read_source(path), "# coding: cp1252\nx = '日本'\n")
    assert path.read_bytes() == raw
    assert _leftovers(tmp_path) == []


@pytest.mark.skipif(os.name != "posix", reason="symlinks")
def test_atomic_write_through_symlink_keeps_the_link(tmp_path: Path) -> None:
    target = tmp_path / "real.py"
    target.write_bytes(b"x = 1\n")
    link = tmp_path / "link.py"
    link.symlink_to(target)
    write_source_atomic(read_source(link), "x = 2\n")
    assert link.is_symlink()
    assert target.read_bytes() == b"x = 2\n"


# --------------------------------------------------------------------------- .gitignore


@pytest.mark.parametrize(
    ("pattern", "path", "is_dir", "ignored"),
    [
        ("*.log", "a.log", False, True),
        ("*.log", "deep/dir/a.log", False, True),
        ("*_pb2.py", "proto/x_pb2.py", False, True),
        ("/build", "build", True, True),
        ("/build", "src/build", True, False),
        ("gen/", "gen", True, True),
        ("gen/", "gen", False, False),  # trailing slash: directories only
        ("docs/*.py", "docs/a.py", False, True),
        ("docs/*.py", "docs/sub/a.py", False, False),  # `*` stops at `/`
        ("docs/*.py", "x/docs/a.py", False, False),  # inner slash anchors the pattern
        ("**/gen", "a/b/gen", True, True),
        ("**/gen", "gen", True, True),
        ("a/**/b.py", "a/b.py", False, True),
        ("a/**/b.py", "a/x/y/b.py", False, True),
        ("a/**", "a/x/y.py", False, True),
        ("file?.py", "file1.py", False, True),
        ("file[0-9].py", "file7.py", False, True),
        ("file[!0-9].py", "file7.py", False, False),
        ("\\#hash.py", "#hash.py", False, True),
        ("# comment", "# comment", False, False),
        ("trailing.py   ", "trailing.py", False, True),
    ],
)
def test_gitignore_patterns(pattern: str, path: str, is_dir: bool, ignored: bool) -> None:
    assert GitIgnore.from_text(pattern + "\n").is_ignored(path, is_dir=is_dir) is ignored


def test_gitignore_last_match_wins_and_negation() -> None:
    ignore = GitIgnore.from_text("*_pb2.py\n!keep_pb2.py\n")
    assert ignore.is_ignored("x_pb2.py", is_dir=False)
    assert not ignore.is_ignored("keep_pb2.py", is_dir=False)


# --------------------------------------------------------------------------- discovery


def _tree(root: Path, files: list[str]) -> None:
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")


def _rel(paths: list[Path], root: Path) -> list[str]:
    return [p.relative_to(root).as_posix() for p in paths]


def test_discover_directory_sorted_filtered(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        [
            "b.py",
            "a.py",
            "notes.txt",
            "pkg/__init__.py",
            "pkg/z.py",
            "pkg/sub/m.py",
            ".hidden/h.py",
            "venv/lib/v.py",
            "node_modules/n.py",
            "build/gen.py",
            "pkg/__pycache__/c.py",
            "gen/out.py",
            "pkg/msg_pb2.py",
            "pkg/keep_pb2.py",
            "skip_me.py",
        ],
    )
    (tmp_path / ".gitignore").write_text("# generated\n/gen/\n*_pb2.py\n!keep_pb2.py\n")
    settings = Settings(project_root=tmp_path, extend_exclude=("skip_*.py",))
    found = discover([tmp_path], settings)
    assert found.errors == []
    assert _rel(found.files, tmp_path) == [
        "a.py",
        "b.py",
        "pkg/__init__.py",
        "pkg/keep_pb2.py",
        "pkg/sub/m.py",
        "pkg/z.py",
    ]


def test_discover_explicit_files_are_always_checked(tmp_path: Path) -> None:
    _tree(tmp_path, ["venv/v.py", "script", "ignored.py"])
    (tmp_path / ".gitignore").write_text("ignored.py\n")
    settings = Settings(project_root=tmp_path)
    explicit = [tmp_path / "venv/v.py", tmp_path / "script", tmp_path / "ignored.py"]
    assert discover(explicit, settings).files == explicit


def test_discover_explicit_excluded_directory_checks_its_contents(tmp_path: Path) -> None:
    _tree(tmp_path, ["build/a.py", "build/venv/b.py"])
    found = discover([tmp_path / "build"], Settings(project_root=tmp_path))
    assert _rel(found.files, tmp_path) == ["build/a.py"]


def test_discover_reports_missing_paths_and_continues(tmp_path: Path) -> None:
    _tree(tmp_path, ["a.py"])
    found = discover([tmp_path / "missing.py", tmp_path / "a.py"], Settings(project_root=tmp_path))
    assert found.files == [tmp_path / "a.py"]
    assert len(found.errors) == 1
    assert found.errors[0].filename == str(tmp_path / "missing.py")
    assert "no such file" in found.errors[0].message


def test_discover_deduplicates(tmp_path: Path) -> None:
    _tree(tmp_path, ["a.py", "b.py"])
    found = discover([tmp_path / "b.py", tmp_path, tmp_path / "a.py"], Settings(project_root=tmp_path))
    assert _rel(found.files, tmp_path) == ["b.py", "a.py"]


def test_discover_relative_paths_from_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path, ["src/a.py", "src/venv/x.py"])
    monkeypatch.chdir(tmp_path)
    found = discover([Path(".")], Settings(project_root=tmp_path))
    assert [p.as_posix() for p in found.files] == ["src/a.py"]


def test_gitignore_only_read_from_given_directory_root(tmp_path: Path) -> None:
    _tree(tmp_path, ["pkg/a.py", "pkg/b.py"])
    (tmp_path / ".gitignore").write_text("a.py\n")
    settings = Settings(project_root=tmp_path)
    assert _rel(discover([tmp_path], settings).files, tmp_path) == ["pkg/b.py"]
    # the .gitignore of a directory above the one given is not consulted
    assert _rel(discover([tmp_path / "pkg"], settings).files, tmp_path) == ["pkg/a.py", "pkg/b.py"]


@pytest.mark.skipif(os.name != "posix", reason="symlinks")
def test_discover_does_not_follow_directory_symlinks(tmp_path: Path) -> None:
    _tree(tmp_path, ["pkg/a.py"])
    (tmp_path / "pkg" / "loop").symlink_to(tmp_path, target_is_directory=True)
    found = discover([tmp_path], Settings(project_root=tmp_path))
    assert _rel(found.files, tmp_path) == ["pkg/a.py"]
