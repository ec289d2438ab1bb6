"""Decoding and syntax checks: what becomes DP001 and what is analysable."""

from pathlib import Path

import git

import ast

from dpcheck.parse.source import SourceProblem, blob_id, decode_source, parse_python


def test_utf8_source_decodes() -> None:
    assert decode_source("x = 'é'\n".encode()) == "x = 'é'\n"


def test_latin1_without_cookie_is_a_problem() -> None:
    result = decode_source("ok = 1\nx = 'caf\xe9'\n".encode("latin-1"))
    assert isinstance(result, SourceProblem)
    assert "utf-8" in result.message
    assert (result.line, result.column) == (2, 9)


def test_latin1_with_cookie_is_valid() -> None:
    data = "# -*- coding: latin-1 -*-\nx = 'caf\xe9'\n".encode("latin-1")
    assert decode_source(data) == "# -*- coding: latin-1 -*-\nx = 'caf\xe9'\n"


def test_binary_and_huge_files_are_problems() -> None:
    binary = decode_source(b"\x7fELF\x00\x01\x02")
    assert isinstance(binary, SourceProblem) and "binary" in binary.message
    huge = decode_source(b"x = 1\n" * 10, max_bytes=20)
    assert isinstance(huge, SourceProblem) and "too large" in huge.message


def test_syntax_error_position_is_one_based() -> None:
    problem = parse_python("x = 1\ndef f(:\n    pass\n", "bad.py")
    assert isinstance(problem, SourceProblem)
    assert problem.line == 2
    assert problem.column == 7
    assert "syntax error (as Python 3." in problem.message
    assert isinstance(parse_python("x = 1\n", "ok.py"), ast.Module)


def test_blob_id_matches_git(tmp_path: Path) -> None:
    repo = git.Repo.init(tmp_path)
    data = b"import torch\nprint('hi')\n"
    (tmp_path / "a.py").write_bytes(data)
    assert blob_id(data) == repo.git.hash_object("a.py")
