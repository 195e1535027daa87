"""A checkpoint's bill of materials as text: what `pretrain card --model` prints and the evaluation artifacts show."""

from __future__ import annotations

from typing import Any

KIND_TITLES = {
    "domain": "tokens by domain",
    "source": "tokens by source",
    "licence": "tokens by licence (a sequence packing documents of several licences counts under each)",
    "quality_bucket": "tokens by quality bucket (of each sequence's dominant document)",
}


def fed_of(meta: dict[str, Any]) -> dict[str, Any]:
    """What a checkpoint's meta says it was fed: its bill of materials and the corpus build (what an evaluation
    record keeps, so the bill outlives a pruned checkpoint)."""
    return {"bill": meta.get("data", {}).get("bill"), "corpus": meta.get("corpus")}


def replayed_bill(meta: dict[str, Any]) -> dict[str, Any] | None:
    """The bill of a checkpoint saved before bills existed, replayed from its (epoch, position) over the token
    shards it names, as a resume would; None when it holds no position or its shards are gone or rebuilt."""
    from pretrain_core import storage
    from pretrain_core.train.checkpoint.catalog import saved_setting
    from pretrain_core.train.parallel.layout import Layout
    from pretrain_core.train.shards.sequences import TrainBatches, load_sequences

    data, tokens_url = meta.get("data", {}), saved_setting(meta, "tokens_url")
    if "position" not in data or not tokens_url or not storage.exists(storage.join(tokens_url, "data")):
        return None
    world_size = int(saved_setting(meta, "nproc_per_node", 1)) * int(saved_setting(meta, "nnodes", 1))
    degree = {kind: int(saved_setting(meta, f"{kind}_parallel", 1)) for kind in ("pipeline", "context", "tensor")}
    layout = Layout(world_size, pp=degree["pipeline"], cp=degree["context"], tp=degree["tensor"])
    sequences = load_sequences(tokens_url, "train", int(saved_setting(meta, "seq_len")))
    if meta.get("train_data_sha256") not in (None, sequences.sha256()):
        return None  # rebuilt since: these are not the sequences it read
    micro = int(saved_setting(meta, "micro_batch_size"))
    seed = int(meta.get("config", {}).get("seed", 0))
    return TrainBatches(sequences, micro, 0, layout.dp, seed, data).bill.as_dict()


def bill_lines(fed: dict[str, Any]) -> list[str]:
    """Markdown lines from `fed_of`: the tokens fed per domain, source, licence and quality bucket, and the
    corpus build they came from."""
    bill = fed.get("bill")
    if not bill:
        return ["This checkpoint records no bill of materials (saved before bills existed)."]
    total = max(int(bill["tokens"]), 1)
    lines = [f"{int(bill['tokens']):,} tokens fed in {int(bill['sequences']):,} sequences."]
    corpus = fed.get("corpus") or {}
    if corpus:
        stages = ", ".join(f"{name} `{value}`" for name, value in corpus.get("stages", []))
        card = corpus.get("card_sha256")
        lines += ["", f"Corpus build `{corpus.get('tokens_url')}`: stage config hashes {stages or 'unknown'}; "
                  f"data card sha256 {f'`{card}`' if card else 'none written'}."]  # fmt: skip
    for kind, title in KIND_TITLES.items():
        counts = sorted(bill["by"].get(kind, {}).items(), key=lambda kv: -kv[1])
        lines += ["", f"| {title} | tokens | share |", "|---|---:|---:|"]
        lines += [f"| {value} | {tokens:,} | {100 * tokens / total:.1f} % |" for value, tokens in counts]
    return lines


def bill_summary(fed: dict[str, Any]) -> str:
    """One line from `fed_of`: the tokens fed and their shares by domain and quality bucket (the nightly report's
    row)."""
    bill = fed.get("bill")
    if not bill:
        return "no bill of materials (saved before bills existed)"
    total = max(int(bill["tokens"]), 1)
    shares = [
        ", ".join(f"{value} {100 * tokens / total:.1f} %" for value, tokens in sorted(bill["by"].get(kind, {}).items()))
        for kind in ("domain", "quality_bucket")
    ]
    return f"{int(bill['tokens']):,} tokens: {'; '.join(s for s in shares if s)}"
