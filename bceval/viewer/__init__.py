"""The static viewer of an output folder (`bceval view`): pages for runs, cases, comparisons, experiments and
guidance runs, drawn as plain HTML with inline SVG. Core layer: reads files and returns or writes pages, never
prints, exits or starts a process (bceval.steps.view does the printing and the serving)."""
