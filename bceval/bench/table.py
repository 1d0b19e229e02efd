"""The table `bceval bench` prints from its report."""

from __future__ import annotations

from typing import Any


def render_table(report: dict[str, Any]) -> str:
    header = "| measurement | " + " | ".join(f"{s['articles']:,} articles" for s in report["sizes"]) + " |"
    lines = [header, "|---|" + "---|" * len(report["sizes"])]
    for name in report["sizes"][0]["results"]:
        cells = []
        for size in report["sizes"]:
            result = size["results"][name]
            rss = f", {result['peakRssMb']:.0f} MB" if result["peakRssMb"] is not None else ""
            cells.append(f"{result['medianSeconds']:.3f} s{rss}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append("| cold / I/O floor | " + " | ".join(f"{s['coldToFloorRatio']}×" for s in report["sizes"]) + " |")
    lines.append("| touch / cold | " + " | ".join(f"{s['touchToColdRatio']:.1%}" for s in report["sizes"]) + " |")
    for step in report["growth"]:
        lines.append(
            f"\nGrowth {step['from']:,} → {step['to']:,} articles ({step['sizeRatio']}×): cold prepare "
            f"{step['coldPrepareRatio']}×"
        )
    for live in report.get("live") or []:
        lines.append(f"\nLive throughput: {live['answered']} of {live['answers']} answers {_throughput_text(live)}")
    experiment = report.get("experiment")
    if experiment:
        lines.append(
            f"\nExperiment: {experiment['arms']} arms × {experiment['epochs']} epochs × {experiment['cases']} "
            f"cases = {experiment['units']} answers ({experiment['answered']} answered) {_throughput_text(experiment)}"
        )
        first = experiment["firstAgentSeconds"]
        lines.append(
            f"Experiment: first agent after {first:.2f} s; no-op rerun {experiment['noOpRerunSeconds']:.2f} s; doit "
            f"state {experiment['stateBytesPerAnswer']:,.0f} bytes per answer"
            if first is not None
            else f"Experiment: no-op rerun {experiment['noOpRerunSeconds']:.2f} s"
        )
        steps = [
            f"{step['answers']:,} answers {step['medianSeconds']:.2f} s"
            + (f" ({step['growth']}×)" if "growth" in step else "")
            + (f", {step['coldSeconds']:.2f} s judging every result again" if "coldSeconds" in step else "")
            for step in experiment["report"]
        ]
        lines.append("Experiment report alone: " + ", ".join(steps))
    api = report.get("api")
    if api and api.get("skipped"):
        lines.append(f"API agent throughput: skipped: {api['skipped']}")
    elif api:
        lines.append(
            f"API agent throughput: {api['answered']} of {api['answers']} answers over a local endpoint "
            f"({api['latencySeconds']:g} s a response, 3 responses a case; the floor: the same conversations "
            f"through the bare openai client) {_throughput_text(api)}"
        )
    view = report.get("view")
    if view:
        loads = view["loadMilliseconds"]
        load = (
            loads["skipped"]
            if "skipped" in loads
            else f"index loads in {loads['index']:.0f} ms, the experiment page in {loads['experiment']:.0f} ms"
        )
        lines.append(
            f"Viewer: {view['arms']} arms × {view['epochs']} epochs × {view['cases']} cases = {view['answers']} "
            f"answers, "
            f"{view['pages']} pages built in {view['coldBuildSeconds']:.2f} s (unchanged rebuild "
            f"{view['unchangedRebuildSeconds']:.2f} s); {load} (index {view['indexBytes'] / 1024:.0f} KiB, experiment "
            f"page {view['experimentPageBytes'] / 1024:.0f} KiB)"
        )
    return "\n".join(lines) + "\n"


def _throughput_text(measured: dict[str, Any]) -> str:
    """How a throughput measurement (see live._throughput) reads in the table."""
    text = (
        f"at --jobs {measured['jobs']}, {measured['secondsPerAnswer']:g} s each: {measured['wallSeconds']:.2f} s, "
        f"the plain launcher's floor {measured['floorSeconds']:.2f} s, the ideal {measured['idealSeconds']:.2f} s: "
        f"{measured['ratioToFloor']:.3f}× the floor, {measured['ratioToIdeal']:.3f}× the ideal (the floor "
        f"{measured['floorRatioToIdeal']:.3f}×)"
    )
    if measured.get("ownCpuPerAnswerSeconds") is not None:
        text += (
            f"; CPU per answer {measured['cpuPerAnswerSeconds'] * 1000:.1f} ms, the floor's "
            f"{measured['floorCpuPerAnswerSeconds'] * 1000:.1f} ms: bceval's own "
            f"{measured['ownCpuPerAnswerSeconds'] * 1000:.1f} ms"
        )
    return text
