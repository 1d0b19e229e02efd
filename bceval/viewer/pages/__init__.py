"""The viewer's pages as HTML strings, from what `collect` read: index, review run, case and compare, experiment,
guidance run and case. Pure rendering: each function returns a page; `site` decides where it goes and writes it.

Every page is given `root`, the relative path back to the site's root, so links stay relative."""

from __future__ import annotations

from bceval.viewer.pages.common import case_href
from bceval.viewer.pages.experiment import CASES_PER_PAGE, experiment_cases_page, experiment_page
from bceval.viewer.pages.guidance import guidance_case_page, guidance_page
from bceval.viewer.pages.index import index_page
from bceval.viewer.pages.review import case_page, compare_page, run_page
from bceval.viewer.pages.transcript import conversation

__all__ = [
    "CASES_PER_PAGE",
    "case_href",
    "case_page",
    "compare_page",
    "conversation",
    "experiment_cases_page",
    "experiment_page",
    "guidance_case_page",
    "guidance_page",
    "index_page",
    "run_page",
]
