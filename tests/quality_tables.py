"""Real documents shaped as the quality stage hands them on, for tests of the stages after it."""

from __future__ import annotations

import pyarrow as pa

from pretrain_core.schema import QUALITY
from pretrain_core.standalone import conform

LICENCES = ("CC-BY-4.0", "GPL-2.0-or-later OR CC-BY-SA-3.0", "MIT")  # dealt in turn, so sequences mix them


def quality_table(docs: list[dict[str, str]]) -> pa.Table:
    """`docs` (id, text, domain, location) with upstream columns neutral, as for a standalone stage run."""
    ingested = pa.table(
        {
            "id": [d["id"] for d in docs],
            "text": [d["text"] for d in docs],
            "source": ["system-files"] * len(docs),
            "domain": [d["domain"] for d in docs],
            "licence": [LICENCES[i % len(LICENCES)] for i in range(len(docs))],
            "location": [d["location"] for d in docs],
            "code_language": ["python" if d["domain"] == "code" else None for d in docs],
        }
    )
    return conform(ingested, QUALITY)
