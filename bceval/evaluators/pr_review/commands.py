"""The pr-review evaluator's own commands: `bceval pr-review score|coverage|compare` (re-score an answered run under
another verdict provider; the dataset's article coverage; two sets of runs entry by entry) and `bceval judge
calibrate` (the judge against BC-Bench's hand-labelled pairs)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from bceval.config import SOURCES, load_settings
from bceval.errors import EXIT_FAILED, BcevalError
from bceval.evaluators.pr_review.judge import calibration_numbers, judge_for, judge_verdicts, read_calibration
from bceval.evaluators.pr_review.metrics import coverage, inventory, paired
from bceval.evaluators.pr_review.providers import DEFAULT, verdicts
from bceval.jsonio import dumps, read_json_or_none, write_atomic
from bceval.layout import OutDir
from bceval.steps.casework import ANSWERS

NAME = "pr-review"
PASSING_ACCURACY = 0.8  # BC-Bench's judge-calibration bar
ENTRY_FIELDS = {"instance_id", "f1", "matched", "generated", "ignored", "expected"}  # what `compare` reads


def _sentence(text: str) -> str:
    return text[0].upper() + text[1:] + "."


def _endpoint_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--base-url", dest="base_url", help="the judge's chat-completions endpoint")
    parser.add_argument("--api-key-env", dest="api_key_env", default="OPENAI_API_KEY", help="its key's variable")


def add_pr_review(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    text = "re-score a pr-review run under a verdict provider, compare runs, or report the article coverage"
    parser = commands.add_parser(NAME, help=text, description=_sentence(text))
    parser.add_argument("mode", choices=("score", "coverage", "compare"))
    parser.add_argument("--manifest", help="the BC-Bench code-review file (codereview.jsonl; score, coverage)")
    parser.add_argument("--corpus", help="the BCQuality checkout whose articles coverage counts")
    parser.add_argument("--out", help="output root (default: out/)")
    parser.add_argument("--run", help="the run to score (default: <adapter>-pr-review)")
    parser.add_argument("--adapter", default="oracle", help="the adapter whose run it is (default oracle)")
    parser.add_argument(
        "--verdicts", default=DEFAULT, help="articles[@T] (default), location[@T], replay:FILE or judge:MODEL"
    )
    _endpoint_flags(parser)
    for side in ("control", "treatment"):
        parser.add_argument(f"--{side}", action="append", default=[], help=f"compare: a {side} run folder (repeat)")
    return parser


def _calibration_path(out: Path, model: str) -> Path:
    return OutDir(out).path / NAME / "calibration" / f"{model.replace('/', '_')}.json"


def _scores(folders: list[str], side: str) -> list[dict[str, Any]]:
    if not folders:
        raise BcevalError(f"compare: name at least one --{side} run folder")
    found = []
    for folder in folders:
        path = Path(folder) / "score.json" if Path(folder).is_dir() else Path(folder)
        document = read_json_or_none(path)
        if _pin(document) is None:
            raise BcevalError(f"{path}: not the score.json of a pr-review run")
        found.append(document)
    return found


def _pin(document: Any) -> tuple[str, str, str] | None:
    """What two compared runs must share (dataset, verdict provider, prompt); None for a document that is not a
    whole pr-review score.json (a hand edit, another version) rather than a traceback later."""
    try:
        entries = document["entries"] if document["kind"] == "bceval-pr-review-score" else None
        if not all(isinstance(e, dict) and ENTRY_FIELDS <= e.keys() for e in entries):
            return None
        return document["dataset"]["sha256"], document["verdicts"]["provider"], document["prompt_version"]
    except (KeyError, TypeError):
        return None


def compare(args: argparse.Namespace) -> int:
    """Two sides' runs entry by entry (docs/pr-review.md, "Comparing runs"); runs of another dataset, provider or
    prompt are refused."""
    control, treatment = _scores(args.control, "control"), _scores(args.treatment, "treatment")
    pins = {_pin(d) for d in control + treatment}
    if len(pins) > 1:
        raise BcevalError("compare: the runs differ in dataset, verdict provider or prompt; they do not compare")
    print(dumps(paired(control, treatment)), end="")
    return 0


def run_pr_review(evaluator: Any, args: argparse.Namespace) -> int:
    if args.mode == "compare":
        return compare(args)
    if args.manifest is None:
        raise BcevalError(f"{NAME} {args.mode}: give the BC-Bench code-review file with --manifest")
    settings = load_settings(**{k: v for k, v in vars(args).items() if k in SOURCES and v is not None})
    loaded = evaluator.load(settings.corpus, settings.manifest)
    if args.mode == "coverage":
        knowledge = loaded.corpus / "microsoft" / "knowledge"
        if not knowledge.is_dir():  # else every article would be reported unknown against an empty inventory
            raise BcevalError(f"{knowledge}: no such folder: coverage counts a BCQuality checkout's articles")
        print(dumps(coverage(loaded.dataset.entries, inventory(loaded.corpus))), end="")
        return 0
    run = args.run or f"{args.adapter}-{NAME}"
    run_dir = OutDir(settings.out).run(run).path
    if not (run_dir / ANSWERS).is_file():
        raise BcevalError(f"{run_dir}: no answered run (bceval answer --evaluator {NAME} makes one)")
    if not args.verdicts.startswith("judge:"):
        return evaluator.score_run(loaded, run_dir, run, args.adapter, verdicts(args.verdicts))
    model = args.verdicts.removeprefix("judge:")
    provider = judge_verdicts(judge_for(model, args.base_url, args.api_key_env))
    calibration = read_json_or_none(_calibration_path(settings.out, model))
    return evaluator.score_run(loaded, run_dir, run, args.adapter, provider, judge_calibration=calibration)


def add_judge(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    text = "measure the pr-review judge against hand-labelled pairs (accuracy, kappa, flip rate)"
    parser = commands.add_parser("judge", help=text, description=_sentence(text))
    parser.add_argument("mode", choices=("calibrate",))
    parser.add_argument("--calibration", required=True, help="BC-Bench's judge_calibration.jsonl")
    parser.add_argument("--model", required=True, help="the judge model")
    parser.add_argument("--repeats", type=int, default=1, help="judge every pair this many times (default 1)")
    parser.add_argument("--out", help="output root (default: out/)")
    _endpoint_flags(parser)
    return parser


def run_judge(args: argparse.Namespace) -> int:
    """Judge the labelled pairs `--repeats` times (all pairs in one call each time); exit 1 below 0.8 accuracy."""
    if args.repeats < 1:
        raise BcevalError(f"--repeats {args.repeats}: judge the pairs at least once")
    pairs = read_calibration(Path(args.calibration))
    judge = judge_for(args.model, args.base_url, args.api_key_env)
    runs = [judge.ask([(gold, candidate) for gold, candidate, _ in pairs]) for _ in range(args.repeats)]
    numbers = {"judge_model": args.model, **calibration_numbers([label for *_, label in pairs], runs)}
    path = _calibration_path(load_settings(out=args.out).out, args.model)
    write_atomic(path, dumps(numbers))
    kappa = numbers["cohen_kappa"]
    flips = f", flip rate {numbers['flip_rate']}, Fleiss' kappa {numbers['fleiss_kappa']}" if args.repeats > 1 else ""
    print(
        f"Judge {args.model}: accuracy {numbers['accuracy']:.3f} ({numbers['tp'] + numbers['tn']} of {len(pairs)}), "
        f"precision {numbers['precision']}, recall {numbers['recall']}, Cohen's kappa {kappa}{flips}; {path}"
    )
    return 0 if numbers["accuracy"] >= PASSING_ACCURACY else EXIT_FAILED
