"""Print one of the two commands that open README.md, exactly as written there.

    python3 .ci/readme_commands.py demo   # the install-and-run-the-demo line
    python3 .ci/readme_commands.py test   # the install-and-run-the-tests line

The README's first ``sh`` block holds exactly two command lines (comment lines
start with ``#``): the demo first, then the test suite.  `.ci/run` runs what
this prints, and tests/test_readme.py reads the README through the same
function, so the commands CI runs are the README's, word for word, and there is
one parser for them.  Standard library only: `.ci/run` calls it before any
install.
"""

from __future__ import annotations

import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
NAMES = ("demo", "test")


def readme_commands(text: str) -> dict[str, str]:
    """The README's opening commands by name; ValueError if the block is not as described."""
    if "```sh\n" not in text:
        raise ValueError("README.md has no ```sh block")
    block = text.split("```sh\n", 1)[1].split("```", 1)[0]
    lines = [line for line in block.splitlines() if line.strip() and not line.startswith("#")]
    if len(lines) != len(NAMES):
        raise ValueError(
            f"README.md's first sh block must hold exactly {len(NAMES)} command lines "
            f"(demo, then tests); found {len(lines)}: {lines!r}"
        )
    return dict(zip(NAMES, lines))


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in NAMES:
        print(f"usage: {Path(__file__).name} {{{'|'.join(NAMES)}}}", file=sys.stderr)
        return 2
    try:
        print(readme_commands(README.read_text(encoding="utf-8"))[argv[0]])
    except ValueError as exc:
        print(f"{Path(__file__).name}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
