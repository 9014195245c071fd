"""`hermes-fts bench` on a user's own store: read-only, every class timed, recall checked."""

from __future__ import annotations

import hashlib
import json
import random

from hermes_fts.cli import main
from hermes_fts.store import SessionStore

WORDS = ["deploy", "server", "config", "memory", "search", "window", "python", "ticket"]
HAN = "广西桂林漓江山水服务端修改计划东京明天问题会议记录"


def make_store(path):
    rng = random.Random(5)
    with SessionStore(path) as st:
        st.add_session("s1", source="cli")
        st.add_messages(
            {
                "session_id": "s1",
                "role": rng.choice(["user", "assistant"]),
                "content": " ".join(rng.choice(WORDS) for _ in range(4))
                + " "
                + "".join(rng.choice(HAN) for _ in range(rng.randint(2, 9))),
                "timestamp": float(i),
            }
            for i in range(400)
        )


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_bench_reports_every_class_with_full_recall_and_writes_nothing(tmp_path, capsys):
    db = tmp_path / "state.db"
    make_store(db)
    before = digest(db)
    assert main(["bench", "--db", str(db), "--json", "--per-band", "1", "--repeats", "1"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert digest(db) == before
    classes = {row["class"]: row for row in report["classes"]}
    assert set(classes) == {"cjk1", "cjk2", "cjk3", "latin_word"}
    for row in classes.values():
        assert row["min_recall"] == 1.0
        assert row["median_ratio"] > 0
    assert classes["cjk2"]["routes"] == "fts_cjk"
    assert classes["latin_word"]["routes"] == "fts_cjk"  # the word index is opt-in
    assert set(report["sizes"]) == {"hermes_fts_cjk"}  # word and trigram: opt-in
    for term in report["terms"]:
        assert term["route"] == "fts_cjk" and term["like_ms"] > 0


def test_bench_table_for_people_and_argument_errors(tmp_path, capsys):
    db = tmp_path / "state.db"
    make_store(db)
    assert main(["bench", "--db", str(db), "--per-band", "1", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "cjk2" in out and "x text" in out and "recall" in out
    assert main(["bench", "--db", str(db), "--repeats", "0"]) == 2
    assert "must be an integer from 1 to 100" in capsys.readouterr().err


def test_bench_samples_words_not_the_long_tokens_of_tool_output(tmp_path, capsys):
    """A store's vocabulary holds tokens no one searches for (a 19,000-character run in
    a tool output, base64): the bench leaves them out instead of failing on them."""
    db = tmp_path / "state.db"
    make_store(db)
    with SessionStore(db) as st:
        st.add_message("s1", "tool", "x" * 19_000, tool_name="terminal")
    code = main(["bench", "--db", str(db), "--json", "--per-band", "50", "--repeats", "1"])
    assert code == 0
    terms = [t["term"] for t in json.loads(capsys.readouterr().out)["terms"]]
    assert terms and max(len(t) for t in terms) <= 64
