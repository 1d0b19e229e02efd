"""STAND-IN for the independent review agent: reads one review question (JSON) on stdin and answers with a
findings-report. Rules: a page field control without ApplicationArea is major; Find('-') in a loop is major;
Modify in a loop with no SetRange/SetFilter before it is major."""

import json
import re
import sys

question = json.loads(sys.stdin.read())
path, content = question["file-path"], question["content"]
findings = []


# each rule cites the demo article it stands for, so every finding is a findings-report finding that may gate
ARTICLES = {
    "applicationarea": "microsoft/knowledge/ui/set-applicationarea-on-controls.md",
    "findset": "microsoft/knowledge/performance/findset-for-record-loops.md",
    "unfiltered-modify": "microsoft/knowledge/performance/filter-before-findset.md",
}


def finding(rule: str, message: str, offset: int) -> None:
    findings.append({"id": f"demo-review:{rule}:{path}", "severity": "major", "message": message,
                     "location": {"file": path, "line": content.count("\n", 0, offset) + 1},
                     "references": [{"path": ARTICLES[rule]}], "confidence": "high", "domain": "demo"})


if path.endswith(".Page.al"):
    for control in re.finditer(r"field\(([^;]+);[^)]*\)\s*\{([^}]*)\}", content):
        if "ApplicationArea" not in control[2]:
            finding("applicationarea", f"page field {control[1].strip()} has no ApplicationArea", control.start())
found = re.search(r"Find\('-'\)", content)
if found and "repeat" in content:
    finding("findset", "a record loop starts with Find('-') instead of FindSet", found.start())
if "Modify(" in content and "repeat" in content and not re.search(r"Set(Range|Filter)\(", content):
    finding("unfiltered-modify", "the loop modifies every record: no filter before it", content.index("Modify("))
counts = {s: sum(1 for f in findings if f["severity"] == s) for s in ("blocker", "major", "minor", "info")}
print(json.dumps({"skill": {"id": "al-code-review", "version": 1}, "outcome": "completed",
                  "summary": {"counts": counts, "coverage": {"worklist-size": 1, "items-evaluated": 1}},
                  "findings": findings, "suppressed": []}))
