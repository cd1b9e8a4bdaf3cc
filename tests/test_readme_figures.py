"""The README's en_ewt figures are those of the recorded retrained models.

``results/retrain-en_ewt.json`` records what ``make check-retrain`` retrains from each en_ewt
config (benchmarks/check_retrain.py): the models' hashes and their scores on en_ewt test. The
README's parser table and its tagging paragraph must quote those scores, so that the figures a
user reads are the ones the code of this commit retrains.
"""

from __future__ import annotations

import json
import re

from paths import REPO

RECORD = json.loads((REPO / "results" / "retrain-en_ewt.json").read_text(encoding="utf-8"))
README = (REPO / "README.md").read_text(encoding="utf-8")
FLAT = " ".join(README.split())  # the prose with its line breaks and indents as single spaces
# a row of the parser table: | `configs/en_ewt/NAME.yaml` | parts | decoder | UAS / LAS | ...
TABLE_ROW = re.compile(r"^\| `configs/en_ewt/([\w-]+)\.yaml` \|[^|]*\|[^|]*\| "
                       r"(\d+\.\d\d) / (\d+\.\d\d) \|", re.MULTILINE)


def recorded(name: str) -> dict[str, float]:
    return RECORD["configs"][name]["scores"]


def test_the_parser_table_quotes_the_recorded_scores() -> None:
    rows = TABLE_ROW.findall(README)
    assert len(rows) >= 15, "the README's parser table was not found"
    wrong = [f"{name}: README {uas} / {las}, recorded {recorded(name)}"
             for name, uas, las in rows
             if (float(uas), float(las)) != (recorded(name)["uas"], recorded(name)["las"])]
    assert not wrong, "\n".join(wrong)
    assert {name for name, _, _ in rows} <= set(RECORD["configs"])


def test_the_tagging_paragraph_quotes_the_recorded_scores() -> None:
    tagger = recorded("tagger")
    assert re.search(rf"UPOS {tagger['upos']:.2f}, XPOS {tagger['xpos']:.2f}, "
                     rf"UFeats {tagger['ufeats']:.2f}, AllTags \d+\.\d\d, "
                     rf"Lemmas {tagger['lemmas']:.2f}", FLAT)
    for name in ("o2-eisner-tagged", "o1-cle-tagged"):
        scores = recorded(name)
        assert re.search(rf"`{name}` (?:parses it )?at {scores['uas']:.2f} / {scores['las']:.2f}",
                         FLAT), f"the README does not quote {name}'s {scores}"


def test_the_record_names_every_model_by_its_hashes() -> None:
    for name, entry in RECORD["configs"].items():
        for key in ("weights_sha256", "model_sha256"):
            assert re.fullmatch(r"[0-9a-f]{64}", entry[key] or ""), f"{name}: {key}"
