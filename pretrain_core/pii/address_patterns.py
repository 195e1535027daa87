"""Street addresses whose shape says what they are, found by pattern beside the tagger: French and Swiss
addresses ("12, rue des Lilas, 69003 Lyon", "rue Neuve 3, 2000 Neuchâtel") and Chinese ones that
end in a house number (河北省保定市莲池区裕华路318号, 300 新竹縣光復路2段101號5樓).

The tagger learns addresses from the few formats its training locales print; these formats are as regular as a
phone number (a street-type word or a road character, a house number, a postcode and a town) and hold whatever
names, so a pattern finds them whether or not their words were ever seen. Each pattern runs only on text that
holds its cheap markers (a comma and a postcode, and a street-type word; 号 or 號).
"""

from __future__ import annotations

import re

from pretrain_core.pii.spans import Span

_STREET_TYPES = r"rue|avenue|av\.|boulevard|bd|chemin|place|allée|impasse|quai|route|cours|passage|square|prom\."
_FRENCH_MARKER = re.compile(rf"\b(?:{_STREET_TYPES})(?=\s)", re.IGNORECASE)
_POSTCODE = re.compile(r",\s?\d{4,5}\s")  # the cheapest part of a French address to look for: ", 75001 "
_UPPER_WORD = r"[A-ZÀ-Ý][\w'’-]*"
# [number[,]] street-type [particle] Name{1,4} [number], postcode Town{1,4} (words on the same line).
_FRENCH_ADDRESS = re.compile(
    rf"(?:\b\d{{1,4}}(?:\s?(?:bis|ter))?,?\s)?(?i:{_STREET_TYPES})\s"
    rf"(?:(?:de la|de l'|de|du|des|d'|la|le|les)\s?)?{_UPPER_WORD}(?:[ -]{_UPPER_WORD}){{0,3}}"
    rf"(?:\s\d{{1,4}}[a-z]?)?,\s?\d{{4,5}}\s(?:(?:de|le|la|les|sur|sous|am|an|bei)\s)?{_UPPER_WORD}"
    rf"(?:[ -](?:am|an|bei|sur|sous|en|de|le|la|les|{_UPPER_WORD})){{0,3}}"
)
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# [postcode] place names, a road (路, 街, 巷, 胡同 ...), [section], a house number with 号, [之 n], [floor], [room].
_CHINESE_ADDRESS = re.compile(
    rf"(?:\d{{3,6}}[ \u3000]?)?[{_HAN}]{{1,20}}?(?:路|街|巷|道|弄|胡同|大道|里)"
    rf"(?:[\d一二三四五六七八九十]+段)?\d{{1,5}}[号號](?:之\d{{1,3}})?(?:\d{{1,3}}[楼樓层層F])?(?:\d{{1,5}}室)?"
)


def find_addresses(text: str) -> list[Span]:
    """Addresses of the French and Chinese shapes above, in text order."""
    spans = []
    if _POSTCODE.search(text) and _FRENCH_MARKER.search(text):
        spans += [Span(m.start(), m.end(), "address") for m in _FRENCH_ADDRESS.finditer(text)]
    if "号" in text or "號" in text:
        spans += [Span(m.start(), m.end(), "address") for m in _CHINESE_ADDRESS.finditer(text)]
    return sorted(spans)
