"""STAND-IN for a BC container test run: per fixture, text checks of what the acceptance criteria ask for.
Usage: tests.py CASE. Exit 0 when every check holds, 1 otherwise."""

import re
import sys
from pathlib import Path


def text_of(pattern: str) -> str:
    return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in sorted(Path.cwd().rglob(pattern)))


def rating() -> list[str]:
    table, page = text_of("*.Table.al"), text_of("*.Page.al")
    failed = []
    field = re.search(r"field\(\d+;\s*Rating;\s*Integer\)\s*\{([^}]*)\}", table)
    if not field:
        failed.append("TestRatingFieldExists: table Courier has no Integer field Rating")
    control = re.search(r"field\(Rating;\s*Rec\.Rating\)\s*\{([^}]*)\}", page)
    if not control:
        failed.append("TestRatingOnList: page Courier List does not show Rating")
    elif "ToolTip" not in control[1] and not (field and "ToolTip" in field[1]):
        failed.append("TestRatingToolTip: Rating has no ToolTip on the page or the table")
    return failed


def deactivate() -> list[str]:
    code = text_of("*.Codeunit.al")
    failed = []
    filtered = re.search(r'SetRange\("Carrier Code",\s*CarrierCode\)', code)
    loop = code.find("FindSet(")
    if not filtered or (loop >= 0 and filtered.start() > loop):
        failed.append("TestOnlyTheCarrier: couriers are not filtered on Carrier Code before the loop")
    if loop < 0 or "Find('-')" in code:
        failed.append("TestReadsWithFindSet: the loop does not read with FindSet")
    return failed


TESTS = {"courier-rating-field": rating, "courier-deactivate-batch": deactivate}

case = sys.argv[1] if len(sys.argv) > 1 else ""
if case not in TESTS:
    print(f"stand-in tests: no tests for case {case!r}")
    sys.exit(1)
failures = TESTS[case]()
for failure in failures:
    print(f"FAILED {failure}")
print(f"stand-in tests: {len(failures)} failed")
sys.exit(1 if failures else 0)
