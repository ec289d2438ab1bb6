"""read_pins on real requirements files: pip's syntax, includes, URLs, markers, bad lines."""

from __future__ import annotations

from pathlib import Path

from dpcheck.discover.pins import Pin, read_pins


def rows(pins: tuple[Pin, ...]) -> list[tuple[str, str, str | None, str, int]]:
    return [(p.library, p.specifier, p.version, p.span.path, p.span.line) for p in pins]


def read(root: Path, *names: str):
    return read_pins(root, [root / name for name in names])


def test_plain_lines_comments_markers_options_and_continuations(tmp_path, write_tree):
    write_tree(
        tmp_path,
        {
            "requirements.txt": (
                "# training deps\n"
                "--index-url https://download.pytorch.org/whl/cpu\n"
                "torch==2.3.0\n"
                "opacus==1.4.0  # exact pin\n"
                "TensorFlow_Privacy \\\n"
                "    >=0.8,<0.9\n"
                'jax-privacy==0.3.0 ; python_version >= "3.10"\n'
                "dp-accounting==0.4.4 --hash=sha256:0123456789abcdef\n"
                "prv_accountant\n"
                "tf-privacy==1.0\n"
                "\n"
            )
        },
    )
    result = read(tmp_path, "requirements.txt")
    assert result.problems == ()
    assert rows(result.pins) == [
        ("opacus", "==1.4.0", "1.4.0", "requirements.txt", 4),
        ("tensorflow-privacy", "<0.9,>=0.8", None, "requirements.txt", 5),
        ("jax-privacy", "==0.3.0", "0.3.0", "requirements.txt", 7),
        ("dp-accounting", "==0.4.4", "0.4.4", "requirements.txt", 8),
        ("prv-accountant", "", None, "requirements.txt", 9),
    ]
    assert result.pins[2].raw == 'jax-privacy==0.3.0 ; python_version >= "3.10"'


def test_wildcard_and_triple_equals(tmp_path, write_tree):
    write_tree(tmp_path, {"requirements-dev.txt": "opacus==1.4.*\ndp-accounting===0.4.4\n"})
    result = read(tmp_path, "requirements-dev.txt")
    assert rows(result.pins) == [
        ("opacus", "==1.4.*", None, "requirements-dev.txt", 1),
        ("dp-accounting", "===0.4.4", "0.4.4", "requirements-dev.txt", 2),
    ]


def test_includes_and_constraints_relative_to_the_including_file(tmp_path, write_tree):
    write_tree(
        tmp_path,
        {
            "sub/requirements.txt": "-r base/common.txt\n--constraint=../constraints.txt\n",
            "sub/base/common.txt": "numpy\n-rmore.txt\nopacus>=1.4\n",
            "sub/base/more.txt": "dp-accounting==0.4.4\n",
            "constraints.txt": "opacus==1.4.1\n",
        },
    )
    result = read(tmp_path, "sub/requirements.txt")
    assert result.problems == ()
    assert rows(result.pins) == [
        ("dp-accounting", "==0.4.4", "0.4.4", "sub/base/more.txt", 1),
        ("opacus", ">=1.4", None, "sub/base/common.txt", 3),
        ("opacus", "==1.4.1", "1.4.1", "constraints.txt", 1),
    ]


def test_include_cycle_ends_and_a_file_read_twice_gives_its_pins_once(tmp_path, write_tree):
    write_tree(
        tmp_path,
        {
            "requirements.txt": "-r requirements-b.txt\nopacus==1.4.0\n",
            "requirements-b.txt": "-r requirements.txt\ndp-accounting==0.4.4\n",
        },
    )
    result = read(tmp_path, "requirements.txt", "requirements-b.txt")
    # requirements-b.txt sorts first ("-" < "."), and its include is read where it stands
    assert rows(result.pins) == [
        ("opacus", "==1.4.0", "1.4.0", "requirements.txt", 2),
        ("dp-accounting", "==0.4.4", "0.4.4", "requirements-b.txt", 2),
    ]


def test_missing_include_is_a_problem_and_reading_goes_on(tmp_path, write_tree):
    write_tree(tmp_path, {"requirements.txt": "-r nowhere.txt\nopacus==1.4.0\n"})
    result = read(tmp_path, "requirements.txt")
    assert rows(result.pins) == [("opacus", "==1.4.0", "1.4.0", "requirements.txt", 2)]
    assert len(result.problems) == 1
    path, message = result.problems[0]
    assert path == tmp_path / "requirements.txt"
    assert "requirements.txt:1" in message and "nowhere.txt" in message


def test_include_outside_the_project_is_not_read(tmp_path, write_tree):
    secret = tmp_path / "secret.txt"
    secret.write_text("password-line-one\nopacus==0.13.0\n")
    project = tmp_path / "proj"
    write_tree(project, {"requirements.txt": f"-r {secret}\n-r ../secret.txt\nopacus==1.4.0\n"})
    result = read(project, "requirements.txt")
    assert rows(result.pins) == [("opacus", "==1.4.0", "1.4.0", "requirements.txt", 3)]
    assert len(result.problems) == 2
    assert all("outside the project" in message for _, message in result.problems)
    assert not any("password" in message for _, message in result.problems)


def test_urls_vcs_refs_archives_and_local_paths(tmp_path, write_tree):
    write_tree(
        tmp_path,
        {
            "requirements.txt": (
                "opacus @ git+https://github.com/pytorch/opacus.git@v1.4.0\n"
                "git+https://github.com/google/differential-privacy.git@main"
                "#egg=dp_accounting&subdirectory=python\n"
                "https://example.org/files/prv_accountant-0.2.0-py3-none-any.whl\n"
                "-e git+https://github.com/google-deepmind/jax_privacy.git#egg=jax-privacy\n"
                "tensorflow-privacy @ https://example.org/tensorflow_privacy-0.8.12.tar.gz\n"
                "./vendor/opacus\n"
                "-e .\n"
            )
        },
    )
    result = read(tmp_path, "requirements.txt")
    assert result.problems == ()
    assert rows(result.pins) == [
        ("opacus", "@v1.4.0", None, "requirements.txt", 1),
        ("dp-accounting", "@main", None, "requirements.txt", 2),
        ("prv-accountant", "==0.2.0", "0.2.0", "requirements.txt", 3),
        ("jax-privacy", "", None, "requirements.txt", 4),
        ("tensorflow-privacy", "==0.8.12", "0.8.12", "requirements.txt", 5),
    ]
    assert result.pins[0].raw == "opacus @ git+https://github.com/pytorch/opacus.git@v1.4.0"


def test_invalid_line_is_a_problem_naming_file_and_line(tmp_path, write_tree):
    write_tree(tmp_path, {"requirements.txt": "opacus >>= 1.4\ndp-accounting==0.4.4\n"})
    result = read(tmp_path, "requirements.txt")
    assert rows(result.pins) == [("dp-accounting", "==0.4.4", "0.4.4", "requirements.txt", 2)]
    messages = [message for _, message in result.problems]
    assert len(messages) == 1 and messages[0].startswith("requirements.txt:1: invalid requirement")


def test_undecodable_file_is_a_problem(tmp_path):
    (tmp_path / "requirements.txt").write_bytes(b"opacus==1.4.0\n\xff\xfe\n")
    result = read(tmp_path, "requirements.txt")
    assert result.pins == ()
    assert [("UTF-8" in m) for _, m in result.problems] == [True]


def test_conda_package_list_named_requirements_is_read_as_conda(tmp_path, write_tree):
    # what `conda list --export` writes: a platform header, then name=version=build lines
    write_tree(tmp_path, {"requirements.txt": (
        "# This file may be used to create an environment using:\n"
        "# $ conda create --name <env> --file <this file>\n"
        "# platform: linux-64\n"
        "numpy=1.26.4=py311h64a7726_0\n"
        "opacus=1.4.0=pyhd8ed1ab_0\n"
        "private-transformers=0.2.3=pypi_0\n"
    )})
    result = read(tmp_path, "requirements.txt")
    assert result.problems == ()
    assert rows(result.pins) == [
        ("opacus", "==1.4.0", "1.4.0", "requirements.txt", 5)]


def test_package_list_without_header_is_told_by_its_entries(tmp_path, write_tree):
    write_tree(tmp_path, {"deps.txt": "torch=2.3.0=cpu_py311\ndp-accounting=0.4.4=pypi_0\n"})
    result = read(tmp_path, "deps.txt")
    assert result.problems == ()
    assert rows(result.pins) == [("dp-accounting", "==0.4.4", "0.4.4", "deps.txt", 2)]


def test_a_single_conda_style_line_among_pip_lines_is_still_a_problem(tmp_path, write_tree):
    write_tree(tmp_path, {"requirements.txt": "torch==2.3.0\nopacus=1.4.0=py_0\n"})
    result = read(tmp_path, "requirements.txt")
    assert result.pins == ()
    assert [m.startswith("requirements.txt:2: invalid requirement")
            for _, m in result.problems] == [True]
