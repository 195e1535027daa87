"""The PII stage end to end: the shipped tagger, redaction, density drops, code documents and the shard contract."""

from __future__ import annotations

import pickle
import sysconfig
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest

from pretrain_core import schema, storage
from pretrain_core.pii.config import PiiConfig
from pretrain_core.pii.stage import PiiStage
from pretrain_core.stage import ShardJob, run_shard

GPL = (Path(__file__).resolve().parents[2] / "data" / "reference" / "licences" / "GPL-3").read_text(encoding="utf-8")
PROSE = GPL[GPL.index("The GNU General Public License is") :][:1500]  # real prose, no PII of its own
CONTACT = "Questions about this release go to Sarah Connor at sarah.connor@example.com or +1 415 555 2671."
CODE = (
    "import boto3\n\n# Maintainer: John Smith\n"
    'client = boto3.client("s3", aws_access_key_id="AKIAIOSFODNN7EXAMPLE")\n'
    'LOCAL = "192.168.1.20"\nPUBLIC = "203.0.114.7"\n'
)
CONTACT_LIST = "alice@example.org, bob@example.org, carol@example.org, dave@example.org\n030 12345678"


def dedup_table(rows: list[tuple[str, str, str | None, str]]) -> pa.Table:
    """DEDUP-schema rows from (text, domain, code_language, lang)."""
    return pa.Table.from_pylist(
        [
            {
                "id": f"doc-{i}",
                "text": text,
                "source": "test",
                "domain": domain,
                "licence": "MIT",
                "location": f"test/{i}",
                "code_language": code_language,
                "lang": lang,
                "lang_score": 1.0,
                "dup_cluster": f"doc-{i}",
                "dup_cluster_size": 1,
            }
            for i, (text, domain, code_language, lang) in enumerate(rows)
        ],
        schema=schema.DEDUP,
    )


@pytest.fixture(scope="module")
def shard() -> pa.Table:
    return dedup_table(
        [
            (f"{PROSE}\n\n{CONTACT}", "general", None, "en"),
            ("Bitte überweisen Sie den Betrag auf DE89 3704 0044 0532 0130 00. " + PROSE, "general", None, "de"),
            (CODE, "code", "python", "und"),
            (CONTACT_LIST, "general", None, "en"),
            (PROSE, "specialist", None, "en"),
        ]
    )


def test_the_tagger_is_read_as_data_never_unpickled(tmp_path: Path) -> None:
    planted = tmp_path / "pii_tagger.safetensors"
    planted.write_bytes(pickle.dumps({"format": 2}))  # a pickle in the model's place must not be loaded
    with pytest.raises(ValueError, match="not a PII tagger model"):
        PiiStage(PiiConfig(classifier_model=str(planted)))
    assert PiiStage(PiiConfig(classifier_enabled=False)).tagger is None


def test_redaction_types_and_density_drop(pii_config: PiiConfig, shard: pa.Table) -> None:
    output = PiiStage(pii_config).process(shard)
    kept = {row["id"]: row for row in output.kept.to_pylist()}
    dropped = {row["id"]: row for row in output.dropped.to_pylist()}

    assert kept["doc-0"]["text"].endswith("go to <PERSON> at <EMAIL> or <PHONE>.")
    assert kept["doc-0"]["pii_types"] == ["email", "person", "phone"] and kept["doc-0"]["pii_count"] == 3
    assert kept["doc-1"]["text"].startswith("Bitte überweisen Sie den Betrag auf <IBAN>. ")
    assert kept["doc-4"]["text"] == PROSE and kept["doc-4"]["pii_count"] == 0 and kept["doc-4"]["pii_types"] == []

    assert dropped["doc-3"]["drop_reason"] == "pii_density"
    assert "@" not in dropped["doc-3"]["text"]  # the quarantine is redacted too
    assert output.stats["pii_email"] == 5 and output.stats["pii_documents"] == 4


def test_code_redacts_names_in_comments_but_keeps_private_addresses(pii_config: PiiConfig, shard: pa.Table) -> None:
    row = PiiStage(pii_config).process(shard).kept.to_pylist()[2]
    assert "# Maintainer: <PERSON>" in row["text"] and '"192.168.1.20"' in row["text"]
    assert 'aws_access_key_id="<SECRET>"' in row["text"] and 'PUBLIC = "<IP>"' in row["text"]
    assert row["pii_types"] == ["ip", "person", "secret"]


def test_names_in_code_are_read_in_comments_and_strings_only(pii_config: PiiConfig) -> None:
    """The authors in a real module's comments are found; its identifiers, even capitalised pairs in its
    docstrings ("Raise KeyError"), are not names; names used as identifiers are not read at all."""
    heapq = (Path(sysconfig.get_paths()["stdlib"]) / "heapq.py").read_text(encoding="utf-8")
    code = heapq + '\nclass John:\n    """Raise KeyError when the key is missing."""\nJohn Smith = 1\n'
    stats: Counter[str] = Counter()
    (spans,) = PiiStage(pii_config).detect([code], [True], ["code"], stats, ["python"])
    names = {code[s.start : s.end] for s in spans if s.type == "person"}
    assert {"Kevin O'Connor", "Tim Peters", "Raymond Hettinger"} <= names
    assert not any("KeyError" in name or "John" in name for name in names), names
    assert stats["pii_code_prose_tagged"] == 1
    unread: Counter[str] = Counter()
    unknown = PiiStage(pii_config).detect([code, code], [True, True], ["code"] * 2, unread, ["no-such-language", None])
    assert not any(s.type == "person" for spans in unknown for s in spans)  # no lexer: patterns only
    assert unread["pii_code_prose_not_run"] == 2 and unread["pii_code_prose_tagged"] == 0  # counted, not silent


def test_code_is_searched_for_every_structured_kind_but_its_constants_are_left(pii_config: PiiConfig) -> None:
    code = (
        "# Support: call +1 415-555-0132\n"
        'TEST_CARD = "4111 1111 1111 1111"  # Visa test number\n'
        'ACCOUNT = "DE89 3704 0044 0532 0130 00"\n'
        'timeout_ms = 1234567890\nuid = "550e8400-e29b-41d4-a716-446655440000"\nMAGIC = 0x7f454c46\n'
    ) + "".join(
        f"\n\ndef handler_{i}(event, context):\n    return process(event, retries={i}, delay=0.5)\n" for i in range(8)
    )
    row = PiiStage(pii_config).process(dedup_table([(code, "code", "python", "und")])).kept.to_pylist()[0]
    assert row["pii_types"] == ["card", "iban", "phone"]
    assert "call <PHONE>" in row["text"] and 'TEST_CARD = "<CARD>"' in row["text"] and '"<IBAN>"' in row["text"]
    assert "1234567890" in row["text"] and "550e8400" in row["text"] and "0x7f454c46" in row["text"]


def test_tag_and_drop_actions(pii_config: PiiConfig, shard: pa.Table) -> None:
    tagged = PiiStage(pii_config.model_copy(update={"action": "tag"})).process(shard)
    assert tagged.kept.column("text").to_pylist()[0] == shard.column("text").to_pylist()[0]
    assert tagged.kept.column("pii_count").to_pylist()[0] == 3

    strict = pii_config.model_copy(update={"action": "drop", "max_per_1000_chars": None})
    dropped = PiiStage(strict).process(shard)
    assert dropped.kept.column("id").to_pylist() == ["doc-4"]
    assert set(dropped.dropped.column("drop_reason").to_pylist()) == {"contains_pii"}


def test_names_are_redacted_but_never_a_reason_to_drop(pii_config: PiiConfig) -> None:
    roll = "Present at the meeting: Anna Schmidt, Thomas Weber, Marie Lefebvre, Michael Johnson and Sarah Connor."
    table = dedup_table([(roll, "general", None, "en")])
    output = PiiStage(pii_config).process(table)
    assert output.dropped.num_rows == 0
    assert output.kept.column("text").to_pylist()[0].count("<PERSON>") >= 2
    counting_names = pii_config.model_copy(update={"density_types": ["person"], "density_min_count": 2})
    assert PiiStage(counting_names).process(table).dropped.num_rows == 1


def test_dolma_style_count_limit(pii_config: PiiConfig, shard: pa.Table) -> None:
    cfg = pii_config.model_copy(update={"max_count": 4, "max_per_1000_chars": None})
    output = PiiStage(cfg).process(shard)
    assert output.dropped.column("id").to_pylist() == ["doc-3"]  # five matches: four emails and a phone


def test_run_shard_meets_the_contract_and_ships_to_workers(
    pii_config: PiiConfig, shard: pa.Table, tmp_path: Path
) -> None:
    source = str(tmp_path / "dedup" / "data" / "part-00000.parquet")
    storage.write_parquet(source, shard)
    stage = pickle.loads(pickle.dumps(PiiStage(pii_config)))
    job = ShardJob("pii", "part-00000", (source,), str(tmp_path / "pii"), "hash")
    record = run_shard(job, stage)
    assert record.docs_in == 5 and record.docs_out == 4 and record.dropped == {"pii_density": 1}
    written = storage.read_parquet(job.data_url)
    assert written.schema.names == schema.PII.names


def test_a_pattern_match_cuts_a_tagger_span_that_grew_over_it(pii_config: PiiConfig) -> None:
    """A validated phone is more certain than an address run continuing into it; the leftover "Tel." goes."""
    stage = PiiStage(pii_config)
    text = "Viele Grüße\nAnna Schmidt\nHauptstraße 5, 10115 Berlin\nTel. 030 12345678"
    spans = stage.detect([text], [False], ["de"])[0]
    found = [(text[s.start : s.end], s.type) for s in spans]
    assert ("030 12345678", "phone") in found
    assert not [covered for covered, kind in found if kind != "phone" and "030" in covered]
    assert not [covered for covered, _ in found if covered.strip() in ("Tel.", "Tel")]


def test_documents_without_a_language_get_one_so_names_are_still_found(pii_config: PiiConfig) -> None:
    """Plain JSONL run alone arrives with lang 'und': the tagger must not silently skip it."""
    text = "Yesterday, Michael Johnson said the plan was ready, and the board agreed with him."
    table = dedup_table(
        [(text, "general", None, "und"), ("Gestern hat Anna Schmidt unterschrieben.", "general", None, "und")]
    )
    output = PiiStage(pii_config).process(table)
    assert output.kept.column("text").to_pylist()[0].count("<PERSON>") == 1
    assert output.stats["pii_lang_detected"] == 2 and output.stats.get("pii_tagger_not_run", 0) == 0
    blind = PiiStage(pii_config.model_copy(update={"detect_language": False})).process(table)
    assert "<PERSON>" not in blind.kept.column("text").to_pylist()[0]
    assert blind.stats["pii_tagger_not_run"] == 2  # counted, not silent


def test_prose_in_a_language_the_tagger_lacks_is_counted(pii_config: PiiConfig) -> None:
    table = dedup_table([("Ayer, Juan García dijo que el plan estaba listo.", "general", None, "es")])
    assert PiiStage(pii_config).process(table).stats["pii_tagger_not_run"] == 1


def test_an_empty_shard_gives_empty_outputs(pii_config: PiiConfig, shard: pa.Table) -> None:
    """A shard dedup emptied (every document a duplicate) is processed, not an error: found at 1 GB of text."""
    output = PiiStage(pii_config).process(shard.slice(0, 0))
    assert output.kept.num_rows == output.dropped.num_rows == 0
    assert output.kept.schema.names == schema.PII.names
