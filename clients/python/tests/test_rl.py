"""The kit's RL part: the action index (pure Python), and that the kit stays importable
without numpy for bots that do not use it."""

from __future__ import annotations

import itertools
import subprocess
import sys
import textwrap

from pusoy_client.rl.index import (
    NUM_ACTIONS,
    PASS_ACTION,
    SIZE_STARTS,
    HandIndex,
    action_of_positions,
    card_id,
    positions_of,
)


def test_the_index_numbers_every_set_of_1_2_3_or_5_positions_once():
    seen = set()
    for size, start in zip((1, 2, 3, 5), SIZE_STARTS, strict=True):
        for i, combo in enumerate(itertools.combinations(range(13), size)):
            mask = sum(1 << p for p in combo)
            assert action_of_positions(mask) == start + i
            assert positions_of(start + i) == combo
            seen.add(start + i)
    assert seen == set(range(PASS_ACTION)) and NUM_ACTIONS == PASS_ACTION + 1 == 1665
    assert positions_of(PASS_ACTION) == ()


def test_positions_follow_the_normal_card_order_and_stay_put():
    clubs_low = HandIndex.from_text(["2D", "3C", "3D", "9H", "AS"], "clubs-low")
    diamonds_low = HandIndex.from_text(["2D", "3C", "3D", "9H", "AS"], "diamonds-low")
    assert clubs_low.text_of(0) == ["3C"] and clubs_low.text_of(1) == ["3D"]
    assert diamonds_low.text_of(0) == ["3D"] and diamonds_low.text_of(4) == ["2D"]
    pair = clubs_low.action_of(HandIndex.mask_of(["3D", "3C"]))
    assert clubs_low.text_of(pair) == ["3C", "3D"] and pair == 13
    assert clubs_low.mask_of_action(pair) == (1 << card_id("3C")) | (1 << card_id("3D"))
    # Cards leaving the hand change nothing: positions are the dealt hand's.
    assert clubs_low.held_positions(HandIndex.mask_of(["9H", "2D"])) == 0b10100


def test_cards_not_dealt_and_plays_of_four_have_no_action():
    hand = HandIndex.from_text(["3C", "3D", "3H", "3S", "4C"], "clubs-low")
    for bad in (["5C"], ["3C", "3D", "3H", "3S"]):
        try:
            hand.action_of(HandIndex.mask_of(bad))
        except ValueError:
            continue
        raise AssertionError(f"{bad} has an action")
    assert hand.action_of(0) == PASS_ACTION


def test_the_kit_imports_without_numpy_and_rl_says_what_it_needs():
    code = textwrap.dedent(
        """
        import sys

        class NoNumpy:
            def find_spec(self, name, path=None, target=None):
                if name == "numpy" or name.startswith("numpy."):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None

        sys.meta_path.insert(0, NoNumpy())
        import pusoy_client, pusoy_client.samples, pusoy_client.tracker
        from pusoy_client.rl.index import HandIndex
        assert HandIndex.from_text(["3C"], "clubs-low").text_of(0) == ["3C"]
        import pusoy_client.rl
        try:
            from pusoy_client.rl import PolicyBot
        except ModuleNotFoundError as exc:
            print(exc)
        else:
            raise SystemExit("the encoder imported without numpy")
        assert "numpy" not in sys.modules
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert 'pip install "pusoy-client[numpy]"' in done.stdout
