"""Training of the name/address tagger: a multinomial logistic regression over the featurizer's keys.

Needs scikit-learn and scipy, which the pipeline never loads: it reads the model this produces.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse
from sklearn.linear_model import LogisticRegression

from pretrain_core.pii.classifier import CLASSES, NameAddressTagger, feature_rows
from pretrain_core.pii.spans import Span
from pretrain_core.pii.tokens import FEATURE_KINDS, Featurizer, Token, tokenize
from pretrain_eval.pii_tagger.names import NameLists
from pretrain_eval.pii_tagger.training_data import Example


def fit_tagger(examples: Sequence[Example], names: NameLists, c: float = 3.0, min_count: int = 2) -> NameAddressTagger:
    """Train on labelled examples with the gazetteer's name lists; words and features seen fewer than
    `min_count` times are dropped (they only overfit). lbfgs on a fixed matrix is deterministic, so equal
    inputs (and BLAS thread count) give an equal model."""
    texts = [e.text for e in examples]
    featurizer = Featurizer.learn(texts, min_count, names.first, names.last, names.cjk_family, names.cjk_given)
    keys, candidates = featurizer.candidate_keys(texts)
    labels = np.concatenate(
        [_token_labels(tokenize(e.text), e.spans)[c] for e, c in zip(examples, candidates, strict=True)]
    )
    unique, counts = np.unique(keys, return_counts=True)
    kept = unique[counts >= min_count]
    columns = feature_rows(kept, keys)
    matrix = scipy.sparse.csr_matrix(
        (np.ones(columns.size), columns.ravel(), np.arange(0, columns.size + 1, len(FEATURE_KINDS))),
        shape=(len(keys), len(kept) + 1),
    )
    matrix.sum_duplicates()
    model = LogisticRegression(C=c, max_iter=300, tol=1e-4)
    model.fit(matrix, labels)
    if list(model.classes_) != list(range(len(CLASSES))):
        raise ValueError(f"training data lacks some labels: has {sorted(model.classes_)}")
    weights = model.coef_.T.copy()
    weights[0] = 0.0
    return NameAddressTagger(featurizer, kept, weights, model.intercept_)


def _token_labels(tokens: list[Token], spans: Sequence[Span]) -> np.ndarray:
    labels = np.zeros(len(tokens), dtype=np.int64)
    starts = np.array([t.start for t in tokens], dtype=np.int64)
    ends = np.array([t.end for t in tokens], dtype=np.int64)
    for span in spans:
        inside = np.flatnonzero((starts >= span.start) & (ends <= span.end))
        if len(inside):
            labels[inside] = CLASSES.index(f"I-{span.type}")
            labels[inside[0]] = CLASSES.index(f"B-{span.type}")
    return labels
