"""The development-fixtures evaluator (spec development.md): AL authoring tasks scored from implementation reports
(report mode, parity with upstream) and from runner-owned evidence (runner mode).

Pure core: values (PowerShell's casts and number text), manifest (validation and coverage, §3–§5), prepare
(requests, §6), report (the raw-tree scorer, §9), checks (gate configuration, §11.6), evidence (runner entries
against the agent's claims and the verdict, §11.7–§11.10). The runner (runner, gates, asking) and the commands
(cli, tasks, steps) print and start processes; git and the gate commands run in bceval.evaluators.development.processes.
"""

from __future__ import annotations

import re

from bceval.errors import EXIT_FAILED, BcevalError

MANIFEST_RELATIVE = "evaluation/development-fixtures.json"
CAPABILITIES_RELATIVE = "coverage/development-capabilities.json"
CHECKS_RELATIVE = "evaluation/development-checks.yaml"
MARKER = ".bcquality-development-evaluation"
CHECK_IDS = ("compile", "tests", "review")
PINNED = re.compile(r"^(?P<repo>.+)@(?P<commit>[0-9a-fA-F]{7,40})$")  # a git repository pinned to a commit


class DevelopmentError(BcevalError):
    """Bad input for the development evaluator (upstream crashes here): one line, exit 2."""


class UnreadableKnowledge(DevelopmentError):
    """The knowledge checkout could not be indexed: a failed evaluation (exit 1), as for the guidance evaluators."""

    exit_code = EXIT_FAILED
