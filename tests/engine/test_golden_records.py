"""Speed work changes no record: every example resolves to the record pinned before it (contract 1).

The records, and the step entries the server sends as each step finishes, of
every exalted2e example (as written and under six seeds, the Excellency pack
loaded) and one example of every other ruleset, against
``golden_records.json.gz`` (see ``golden.py``). Key order aside, they must be equal
as JSON text: ``true`` is not ``1`` and ``2.0`` is not ``2`` there, though Python's ``==``
takes them as equal.
"""

import gzip
import json

import pytest

from vtt_bridge import make_host

from .golden import GOLDEN, records


@pytest.fixture(scope="module")
def now():
    return records(make_host())


GOLDEN_RECORDS = json.loads(gzip.decompress(GOLDEN.read_bytes()))


@pytest.mark.parametrize("name", sorted(GOLDEN_RECORDS))
def test_the_record_is_the_one_pinned(now, name):
    assert now[name] == GOLDEN_RECORDS[name]
    assert _text(now[name]) == _text(GOLDEN_RECORDS[name])  # types too: a bool that became an int


def _text(value) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def test_every_example_is_pinned(now):
    assert sorted(now) == sorted(GOLDEN_RECORDS)
