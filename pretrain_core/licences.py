"""Licences as data: SPDX expressions checked and normalised (license-expression's SPDX list), and the policy
ingestion applies to them.

A source declares the licence of its documents (`sources[].licence`, e.g. `GPL-2.0-or-later OR CC-BY-SA-3.0`); a
record may carry its own (`licence_field`, as The Stack's files do). Terms the SPDX list lacks are written as
`LicenseRef-<name>`, as SPDX prescribes. A document with no licence is `NOASSERTION` (SPDX's word for "not
stated"). The policy permits an expression when its AND-parts are all permitted and at least one alternative of
each OR is: a licence is permitted unless denied, and, when an allow-list is given, only if it is on it.
"""

from __future__ import annotations

from functools import cache
from typing import Literal

from license_expression import AND, OR, LicenseWithExceptionSymbol, Licensing, get_spdx_licensing
from pydantic import Field, field_validator

from pretrain_core.config_base import StrictModel

NOASSERTION = "NOASSERTION"  # the licence of a document whose source and record state none
LICENCE_DENIED = "licence_denied"  # ingest drop reasons
LICENCE_UNKNOWN = "licence_unknown"
UnknownLicence = Literal["warn", "refuse"]


@cache
def _licensing() -> Licensing:
    return get_spdx_licensing()  # reads the SPDX list shipped in the package once


def normalize_licence(expression: str) -> str:
    """The expression in SPDX's canonical spelling (`gpl-3.0+` → `GPL-3.0-or-later`); a ValueError in one line
    for a syntax error or an id that is neither on the SPDX list nor a `LicenseRef-`."""
    licensing = _licensing()
    try:
        parsed = licensing.parse(expression, validate=False)
    except Exception as error:  # license-expression raises its own ExpressionError and ParseError kinds
        raise ValueError(f"licence {expression!r} is not an SPDX expression: {error}") from None
    if parsed is None:
        raise ValueError("licence is empty: give an SPDX expression, e.g. MIT or GPL-2.0-or-later OR CC-BY-SA-3.0")
    unknown = [key for key in licensing.unknown_license_keys(parsed) if not key.startswith("LicenseRef-")]
    if unknown:
        raise ValueError(
            f"licence {expression!r}: {', '.join(unknown)} is not on the SPDX list (https://spdx.org/licenses/); "
            "name other terms LicenseRef-<name>"
        )
    return str(parsed.render())


class LicencePolicy(StrictModel):
    """Which licences a build accepts. Documents whose licence is refused are dropped at ingest and counted under
    `licence_denied` / `licence_unknown`; the data card lists every licence that reached the tokens."""

    allowed: list[str] = Field(
        default_factory=list,
        description="SPDX ids accepted; empty: every licence not denied. An expression passes when its AND-parts "
        "all pass and one alternative of each OR does.",
    )
    denied: list[str] = Field(default_factory=list, description="SPDX ids refused whatever `allowed` says.")
    unknown: UnknownLicence = Field(
        default="warn",
        description="A document with no licence (its source declares none and its record names none): warn keeps "
        "it as NOASSERTION with a warning per source (the card shows its token share); refuse drops it, counted "
        "as licence_unknown.",
    )

    @field_validator("allowed", "denied")
    @classmethod
    def _spdx_ids(cls, ids: list[str]) -> list[str]:
        return [normalize_licence(key) for key in ids]

    def permits(self, expression: str) -> bool:
        if expression == NOASSERTION:
            return self.unknown == "warn"
        return self._passes(_licensing().parse(expression, validate=False))

    def _passes(self, node: object) -> bool:
        if isinstance(node, AND):
            return all(self._passes(part) for part in node.args)
        if isinstance(node, OR):
            return any(self._passes(part) for part in node.args)
        key = node.license_symbol.key if isinstance(node, LicenseWithExceptionSymbol) else node.key  # type: ignore[attr-defined]
        return key not in self.denied and (not self.allowed or key in self.allowed)

    def drop_reason(self, expression: str) -> str | None:
        """Why a document under ``expression`` is dropped, or None when the policy permits it."""
        if self.permits(expression):
            return None
        return LICENCE_UNKNOWN if expression == NOASSERTION else LICENCE_DENIED
