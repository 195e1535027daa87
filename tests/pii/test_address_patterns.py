"""French, Swiss and Chinese addresses found by their shape, and text with the same words that holds none."""

from __future__ import annotations

import pytest

from pretrain_core.pii.address_patterns import find_addresses


def found(text: str) -> list[str]:
    return [text[s.start : s.end] for s in find_addresses(text)]


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("Écrivez-nous au 12, rue des Lilas, 69003 Lyon.", "12, rue des Lilas, 69003 Lyon"),
        (
            "Le bureau est au chemin des Vignes 14, 1205 Genève. Merci.",
            "chemin des Vignes 14, 1205 Genève",
        ),  # Swiss order
        ("Adresse : 5 bis, Prom. Rivière, 33000 Bordeaux.", "5 bis, Prom. Rivière, 33000 Bordeaux"),
        (
            "Sitz: avenue Jean Moulin 7, 8001 Zürich am See. Danke.",
            "avenue Jean Moulin 7, 8001 Zürich am See",
        ),
        ("此致\n王伟\n河北省保定市莲池区裕华路318号\n电话", "河北省保定市莲池区裕华路318号"),
        (
            "新办公室位于40341 台中市西區民權路2段88號3樓。",
            "40341 台中市西區民權路2段88號3樓",
        ),  # traditional characters
    ],
)
def test_addresses_of_regular_shape_are_found(text: str, address: str) -> None:
    assert found(text) == [address]


@pytest.mark.parametrize(
    "text",
    [
        "La rue est calme ; l'avenue aussi, depuis 2019.",  # street words, no postcode and town
        "Voir la section 4, place de l'index dans le tableau.",
        "请参见第 6.6 节，以及 3 号文档。",  # 号 without a road
        "这条路很长。",
    ],
)
def test_street_words_without_an_address_are_left_alone(text: str) -> None:
    assert found(text) == []
