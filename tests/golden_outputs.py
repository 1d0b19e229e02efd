"""Digests of everything deterministic bceval writes for the demo corpus and the shared corpus.

The architecture may move code around, never output: `tests/test_golden_outputs.py` compares what the
installed bceval writes today with `tests/golden/outputs.json`, recorded before the refactor began.

    python tests/golden_outputs.py            # print the digests of the current code
    python tests/golden_outputs.py --write    # record them as the expected set (only when output should change)

Every command runs as a user would run it (`python -m bceval` in a scratch folder, a clean environment);
absolute paths of the scratch folder, the checkout and the shared corpus are replaced by `<root>`, `<repo>`
and `<shared>` before hashing, so the digests do not depend on where the test or the checkout is. Scorecards
are left out: they carry the git state of the checkout they ran in.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "evaluation" / "demo-corpus"
SHARED = REPO.parent / "shared" / "corpus" / "bcquality-841b4e7"
GOLDEN = Path(__file__).resolve().parent / "golden" / "outputs.json"
# What bceval writes that is not a deterministic output: doit's state, locks, caches, scorecards, evidence.
SKIPPED_NAMES = {".bceval.doit.db", ".bceval.lock"}
SKIPPED_PARTS = {".build", "cache", "evidence"}  # evidence: inodes and change times
SKIPPED_PREFIXES = ("scorecard.",)


def _environment(root: Path) -> dict[str, str]:
    keep = {"PATH", "HOME", "LANG", "LC_ALL", "SYSTEMROOT", "TMPDIR"}
    environment = {name: value for name, value in os.environ.items() if name in keep}
    environment.update({"PYTHONPATH": str(REPO), "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(root)})
    return environment


def _bceval(root: Path, *args: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bceval", *args],
        cwd=root,
        env=_environment(root),
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode not in (0, 1):  # a FAILED verdict (the baseline) is output too
        raise RuntimeError(f"bceval {' '.join(args)} exited {done.returncode}: {done.stderr.strip()}")


def _digests(folder: Path, root: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if not path.is_file() or path.name in SKIPPED_NAMES or SKIPPED_PARTS & set(rel.parts):
            continue
        if path.name.startswith(SKIPPED_PREFIXES):
            continue
        data = path.read_bytes()
        for place, name in ((root, b"<root>"), (SHARED, b"<shared>"), (REPO, b"<repo>")):
            data = data.replace(str(place.resolve()).encode(), name)
        found[rel.as_posix()] = hashlib.sha256(data).hexdigest()
    return found


def collect() -> dict[str, dict[str, str]]:
    """{scenario: {relative path: sha256}} for every scenario whose inputs exist here."""
    results: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory(prefix="bceval-golden-") as scratch:
        root = Path(scratch).resolve()
        corpora = {"demo": DEMO, **({"shared": SHARED} if SHARED.is_dir() else {})}
        for name, corpus in corpora.items():
            out = root / f"out-{name}"
            _bceval(root, "prepare", "--corpus", str(corpus), "--out", str(out))
            for adapter in ("oracle", "baseline"):
                _bceval(root, "score", "--corpus", str(corpus), "--out", str(out), "--adapter", adapter, "--no-gate")
            results[name] = _digests(out, root)
        demo = root / "guidance-demo"
        _bceval(root, "guidance", "demo-workspaces", "--out", str(demo))
        for kind, manifest in (
            ("plan", "development-guidance-fixtures.json"),
            ("implementation", "implementation-guidance-fixtures.json"),
        ):
            run = root / f"guidance-{kind}"
            knowledge = demo / "knowledge"
            _bceval(
                root, "guidance", "run", "--root", str(knowledge),
                "--manifest", str(knowledge / "evaluation" / manifest),
                "--workspace-map", str(demo / f"workspace-map.{kind}.json"),
                "--out", str(run), "--adapter", "oracle",
            )  # fmt: skip
            results[f"guidance-{kind}"] = _digests(run, root)
    return results


if __name__ == "__main__":
    collected = collect()
    text = json.dumps(collected, indent=2, sort_keys=True) + "\n"
    if "--write" in sys.argv[1:]:
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(text, encoding="utf-8")
        print(f"wrote {GOLDEN} ({sum(len(v) for v in collected.values())} files)")
    else:
        sys.stdout.write(text)
