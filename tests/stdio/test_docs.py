"""docs/protocol.md section 8 as tests: its minimal bot plays, its answer forms parse."""

from __future__ import annotations

import re
import sys

from referee.log.verify import verify_log
from referee.stdio.lines import parse_answer

from .conftest import ROOT, events, referee_match

SECTION = (ROOT / "docs" / "protocol.md").read_text().split("## 8. Stdio bots")[1]


def test_the_minimal_bot_and_the_example_play_a_match(tmp_path):
    code = re.search(r"```python\n(.*?)```", SECTION, re.S)
    assert code, "no Python block in section 8"
    minimal = tmp_path / "minimal.py"
    minimal.write_text(code.group(1))
    log, _ = referee_match(
        tmp_path,
        [
            f"stdio:{sys.executable} {minimal}",
            f"stdio:{sys.executable} examples/stdio_bot.py",
            "greedy",
            "random",
        ],
        "--hands",
        "2",
        "--seed",
        "docs",
    )
    assert verify_log(log).ok
    for seat in (0, 1):
        acted = [e for k in ("played", "passed") for e in events(log, k, seat=seat)]
        assert acted and not [e for e in acted if e.default_cause]


def test_every_answer_form_in_the_table_means_what_it_says():
    table = SECTION.split("### 8.3")[1].split("**Which turn")[0]
    forms = re.findall(r"^\| `([^`]*)`(?: or `([^`]*)`)? \|", table, re.M)
    found = {f for pair in forms for f in pair if f}
    assert found == {
        "5D 5C",
        "pass",
        '["5D","5C"]',
        '{"turn_id":"6","play":{"cards":["5D","5C"]}}',
        '{"turn_id":"6","pass":{}}',
    }
    for form in found:
        answer = parse_answer(form.encode())
        assert not answer.malformed, form
        assert answer.cards in (("5D", "5C"), None), form
