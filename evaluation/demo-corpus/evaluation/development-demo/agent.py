"""SCRIPTED coding agent for the development demo (no model): reads the request on stdin, writes a patch into
its working directory and answers with an implementation report.

Modes: good (the known-good patch, honest report), bad (the known-bad patch, honest report), overclaim (the
known-bad patch, claiming every check passed), commit (the good patch, committed), outside (the good patch plus
a write into the knowledge checkout, which the runner must catch), and arm: a scripted stand-in for an agent that
does better with guidance, for the four-arm demo experiment. It applies the good patch of a case only when the
request carries the guidance that case's scripted rule depends on (courier-rating-field: the development skill's
plan; courier-deactivate-batch: the implementation guidance), so the arms differ by construction. It says nothing
about any real model."""

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
KNOWLEDGE = {
    "courier-rating-field": ["microsoft/knowledge/ui/tooltips-on-page-fields.md",
                             "microsoft/knowledge/ui/set-applicationarea-on-controls.md"],
    "courier-deactivate-batch": ["microsoft/knowledge/performance/filter-before-findset.md",
                                 "microsoft/knowledge/performance/findset-for-record-loops.md"],
}
KINDS = {"courier-rating-field": "feature", "courier-deactivate-batch": "bug"}

mode = sys.argv[1]
text = sys.stdin.read()
request, _ = json.JSONDecoder().raw_decode(text)
case = next(c for c in KNOWLEDGE if "case-" + hashlib.sha256(c.encode()).hexdigest()[:8] == request["caseId"])
if mode == "arm":
    needs = "skill" if case == "courier-rating-field" else "implementationGuidance"
    guided = request.get("skill", "none") != "none" if needs == "skill" else "implementationGuidance" in request
    mode = "good" if guided else "overclaim"
patch = HERE / "patches" / case / ("bad" if mode in ("bad", "overclaim") else "good")
changed = []
for source in sorted(p for p in patch.rglob("*") if p.is_file()):
    rel = source.relative_to(patch).as_posix()
    target = Path.cwd() / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    changed.append(rel)
if mode == "commit":
    subprocess.run(["git", "-c", "user.name=agent", "-c", "user.email=agent@localhost", "commit", "-qam", "agent"],
                   check=True)
if mode == "outside":
    knowledge = next(line.split(": ", 1)[1] for line in text.splitlines() if line.startswith("The knowledge checkout"))
    target = Path(knowledge) / "microsoft" / "knowledge" / "ui" / "tooltips-on-page-fields.md"
    os.chmod(target.parent, 0o755)
    os.chmod(target, 0o644)
    target.write_text("rewritten by the agent\n", encoding="utf-8")

honest_bad = mode == "bad"
status = {"compile": "passed", "tests": "failed" if honest_bad else "passed",
          "review": "failed" if honest_bad else "passed"}
report = {
    "skill": {"id": "al-development", "version": 1},
    "outcome": "partial" if honest_bad else "completed",
    "outcome-reason": "tests and review still fail" if honest_bad else "",
    "summary": {"request": f"Scripted {mode} patch for {case}.", "files-created": 0,
                "files-modified": len(changed), "files-deleted": 0},
    "plan": {"kind": KINDS[case], "assumptions": [], "decisions": [], "objects": []},
    "knowledge": [{"path": p, "used-for": "the scripted patch follows it"} for p in KNOWLEDGE[case]],
    "changes": [{"path": p, "action": "modified", "purpose": "the scripted patch"} for p in changed],
    "validation": [{"id": c, "command": "scripted", "status": s, "details": f"scripted agent says {s}"}
                   for c, s in status.items()],
    "review": {"skill": {"id": "al-code-review", "version": 1}, "outcome": "completed",
               "summary": {"counts": {"blocker": 0, "major": 0, "minor": 0, "info": 0},
                           "coverage": {"worklist-size": len(changed), "items-evaluated": len(changed)}},
               "findings": [{"id": "seen", "severity": "major", "message": "not fixed"}] if honest_bad else [],
               "suppressed": []},
    "review-rounds": [{"round": 1, "outcome": "clean", "gating-finding-ids": []}],
    "suppressed": [],
    "remaining": ["make the tests and the review pass"] if honest_bad else [],
}
print(json.dumps(report))
