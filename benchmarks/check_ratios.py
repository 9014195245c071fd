"""Fail when the CJK index stops beating the LIKE scan by enough, per query class.

Reads pytest-benchmark JSON (``--benchmark-json``).  Search benchmarks store
``extra_info["ratio_vs_like"]`` (LIKE time / index time, measured in the same
run on the same machine) and ``extra_info["query_class"]``.  The gate works on
ratios only, never on absolute times, so it holds on any runner.

    python benchmarks/check_ratios.py bench.json --min-ratio 3 \
        --class-min cjk1=1.5 --class-min latin_glued=2

Per class the ratios of its benchmarks (one per term/band) are combined with
``--aggregate`` (default: geometric mean) and compared with the threshold.
Exit status: 0 pass, 1 a class is under its threshold, 2 no ratio entries at
all (unless ``--allow-missing``) or unreadable input.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

AGGREGATES: dict[str, Callable[[list[float]], float]] = {
    "geomean": lambda xs: math.exp(statistics.fmean(math.log(x) for x in xs)),
    "median": statistics.median,
    "min": min,
}


def ratios_by_class(documents: Iterable[dict[str, Any]]) -> dict[str, list[float]]:
    """``{query_class: [ratio_vs_like, ...]}`` from pytest-benchmark JSON documents."""
    out: dict[str, list[float]] = {}
    for doc in documents:
        for bench in doc.get("benchmarks", []):
            info = bench.get("extra_info") or {}
            ratio = info.get("ratio_vs_like")
            if ratio is None:
                continue
            try:
                value = float(ratio)
            except (TypeError, ValueError):
                raise ValueError(
                    f"{bench.get('fullname', bench.get('name'))}: ratio_vs_like is {ratio!r}"
                ) from None
            if not value > 0 or math.isinf(value):
                raise ValueError(
                    f"{bench.get('fullname', bench.get('name'))}: ratio_vs_like must be a "
                    f"positive finite number, got {ratio!r}"
                )
            cls = str(info.get("query_class") or bench.get("group") or bench.get("name"))
            out.setdefault(cls, []).append(value)
    return out


def _parse_class_min(items: Sequence[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise argparse.ArgumentTypeError(f"--class-min wants CLASS=RATIO, got {item!r}")
        out[name] = float(value)
    return out


def check(
    classes: dict[str, list[float]],
    min_ratio: float,
    class_min: dict[str, float],
    aggregate: str = "geomean",
) -> tuple[bool, list[str]]:
    """``(ok, report lines)``."""
    agg = AGGREGATES[aggregate]
    lines = [f"{'query class':<24} {'n':>3} {aggregate:>9} {'min':>8} {'needed':>7}  result"]
    ok = True
    for cls in sorted(classes):
        values = classes[cls]
        combined = agg(values)
        needed = class_min.get(cls, min_ratio)
        passed = combined >= needed
        ok &= passed
        lines.append(
            f"{cls:<24} {len(values):>3} {combined:>9.2f} {min(values):>8.2f} {needed:>7.2f}  "
            + ("ok" if passed else "TOO SLOW vs LIKE")
        )
    for cls in sorted(set(class_min) - set(classes)):
        lines.append(f"{cls:<24}   -         -        - {class_min[cls]:>7.2f}  no benchmarks")
    return ok, lines


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json", nargs="+", type=Path, help="pytest-benchmark JSON file(s)")
    ap.add_argument(
        "--min-ratio",
        type=float,
        default=2.0,
        help="minimum ratio_vs_like for every class (default 2.0)",
    )
    ap.add_argument(
        "--class-min",
        action="append",
        default=[],
        metavar="CLASS=RATIO",
        help="per-class threshold, overrides --min-ratio (repeatable)",
    )
    ap.add_argument(
        "--aggregate",
        choices=sorted(AGGREGATES),
        default="geomean",
        help="how one class's ratios are combined (default geomean)",
    )
    ap.add_argument(
        "--allow-missing",
        action="store_true",
        help="pass when the JSON holds no ratio_vs_like entries at all",
    )
    args = ap.parse_args(argv)
    try:
        class_min = _parse_class_min(args.class_min)
        docs = []
        for path in args.json:
            text = path.read_text(encoding="utf-8")
            if not text.strip():
                raise ValueError(
                    f"{path} is empty (pytest-benchmark writes no data under --benchmark-disable)"
                )
            docs.append(json.loads(text))
        classes = ratios_by_class(docs)
    except (OSError, ValueError, argparse.ArgumentTypeError) as exc:
        print(f"check_ratios: {exc}", file=sys.stderr)
        return 2
    if not classes:
        names = ", ".join(str(p) for p in args.json)
        print(
            f"check_ratios: no benchmark in {names} stores extra_info['ratio_vs_like'] "
            "(the search benchmarks did not run or do not record it)."
        )
        if args.allow_missing:
            print("check_ratios: nothing to check; passing because --allow-missing was given.")
            return 0
        print("check_ratios: failing; pass --allow-missing to accept a run without them.")
        return 2
    ok, lines = check(classes, args.min_ratio, class_min, args.aggregate)
    print("\n".join(lines))
    print(
        "check_ratios: "
        + (
            "all query classes meet their thresholds"
            if ok
            else "some query classes are under their thresholds"
        )
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
