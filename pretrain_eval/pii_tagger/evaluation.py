"""Held-out precision and recall of the tagger, per kind and language, written next to the model it describes."""

from __future__ import annotations

from collections.abc import Sequence

from pretrain_core.pii.classifier import NameAddressTagger
from pretrain_core.pii.spans import Span
from pretrain_eval.pii_tagger.training_data import Example


def evaluate(tagger: NameAddressTagger, examples: Sequence[Example], threshold: float) -> dict[str, dict[str, float]]:
    """Span precision and recall by kind, overall (`person`) and per language (`person/de`).

    A predicted span counts as correct when it overlaps a gold span of its kind: redaction is what matters, and
    a name found without its title or an address without its postcode still hides the person.
    """
    predicted = tagger.find_spans([e.text for e in examples], threshold)
    tallies: dict[str, list[int]] = {}  # key -> [correct predictions, predictions, found gold, gold]
    for example, spans in zip(examples, predicted, strict=True):
        for kind in ("person", "address"):
            gold = [s for s in example.spans if s.type == kind]
            found = [s for s in spans if s.type == kind]
            for key in (kind, f"{kind}/{example.lang}"):
                tally = tallies.setdefault(key, [0, 0, 0, 0])
                tally[0] += sum(any(_overlap(p, g) for g in gold) for p in found)
                tally[1] += len(found)
                tally[2] += sum(any(_overlap(g, p) for p in found) for g in gold)
                tally[3] += len(gold)
    return {
        key: {
            "precision": round(correct / predictions, 4) if predictions else 1.0,
            "recall": round(hits / gold, 4) if gold else 1.0,
            "predicted": float(predictions),
            "gold": float(gold),
        }
        for key, (correct, predictions, hits, gold) in sorted(tallies.items())
    }


def _overlap(a: Span, b: Span) -> bool:
    return a.start < b.end and b.start < a.end
