"""Licences as data: SPDX expressions normalised or refused in one line, and the policy over AND and OR."""

from __future__ import annotations

import pytest

from pretrain_core.licences import (
    LICENCE_DENIED,
    LICENCE_UNKNOWN,
    NOASSERTION,
    LicencePolicy,
    normalize_licence,
)


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        ("mit", "MIT"),
        ("GPL-3.0+", "GPL-3.0-or-later"),
        ("gpl-2.0-or-later or cc-by-sa-3.0", "GPL-2.0-or-later OR CC-BY-SA-3.0"),
        ("GPL-2.0-only WITH Classpath-exception-2.0", "GPL-2.0-only WITH Classpath-exception-2.0"),
        ("LicenseRef-Debian-FAQ AND PSF-2.0", "LicenseRef-Debian-FAQ AND PSF-2.0"),  # terms SPDX does not list
    ],
)
def test_expressions_take_spdx_canonical_spelling(written: str, canonical: str) -> None:
    assert normalize_licence(written) == canonical


@pytest.mark.parametrize(("written", "message"), [("Foo-1.0", "not on the SPDX list"), ("MIT AND", "not an SPDX")])
def test_an_unknown_id_or_broken_expression_is_refused_in_one_line(written: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as error:
        normalize_licence(written)
    assert "\n" not in str(error.value)


def test_the_policy_needs_every_and_part_and_one_alternative_of_each_or() -> None:
    policy = LicencePolicy(denied=["gpl-3.0+"])
    assert policy.denied == ["GPL-3.0-or-later"]
    assert policy.permits("MIT") and policy.permits("GPL-3.0-or-later OR MIT")
    assert not policy.permits("GPL-3.0-or-later AND MIT")
    assert policy.drop_reason("GPL-3.0-or-later") == LICENCE_DENIED
    allow = LicencePolicy(allowed=["MIT", "CC-BY-4.0"])
    assert allow.permits("MIT AND CC-BY-4.0") and not allow.permits("MIT AND Apache-2.0")
    assert allow.permits("GPL-2.0-only WITH Classpath-exception-2.0 OR MIT")
    assert not allow.permits("GPL-2.0-only WITH Classpath-exception-2.0")


def test_no_stated_licence_is_kept_with_a_warning_or_refused_as_configured() -> None:
    assert LicencePolicy().permits(NOASSERTION)
    assert LicencePolicy(unknown="refuse").drop_reason(NOASSERTION) == LICENCE_UNKNOWN
