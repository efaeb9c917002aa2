"""Ids in the ladder's web paths and forms are ASCII: Python's ``str.isdigit`` and a
regular expression's ``\\d`` take any script's digits ("١" is a digit to both, and
``int("١")`` is 1), which would let one version or match answer to many paths."""

from __future__ import annotations

import pytest

pytest.importorskip("aiohttp")

from referee.ladder.web.common import valid_ladder_match_id, valid_version_id


def test_a_version_id_is_one_to_twelve_ascii_digits():
    assert valid_version_id("1") and valid_version_id("123456789012")
    for text in ("", "١", "1١", "１", "1234567890123", "-1", "+1", " 1", "1.0", "0x1"):
        assert not valid_version_id(text), text


def test_a_match_id_is_the_queues_own_shape_in_ascii():
    assert valid_ladder_match_id("L1764720000-a1b2c3-0")
    for text in ("L١٧٦٤٧٢٠٠٠٠-a1b2c3-0", "L1764720000-a1b2c3-١", "L1764720000-A1B2-0", "x"):
        assert not valid_ladder_match_id(text), text
