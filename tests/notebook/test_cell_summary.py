"""The text a saved notebook keeps of a cell strip: the kernel and the Lab must write the same.

The fixture is shared with ts-tests/celldata.test.ts, which checks the Lab's side against it.
"""

from __future__ import annotations

import json
from pathlib import Path

from dashdock.kernel.cellstrip import bundle, summary_lines

FIXTURE = Path(__file__).resolve().parents[2] / "ts-tests" / "fixtures" / "cell-summaries.json"


def test_the_kernel_writes_the_summaries_the_lab_is_tested_against() -> None:
    for case in json.loads(FIXTURE.read_text()):
        assert summary_lines(case["meta"], case["report"]) == case["lines"]


def test_the_html_summary_escapes_what_user_code_named() -> None:
    case = json.loads(FIXTURE.read_text())[0]
    html = bundle({"label": "[7]", "cell_id": "0" * 32}, case["report"])["text/html"]
    assert "<img" not in html and "boom-&lt;img src=x&gt;" in html
