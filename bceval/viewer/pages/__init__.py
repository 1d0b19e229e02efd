"""The viewer's pages as HTML strings, from what `collect` read: one module per kind of page. Pure rendering: each
function returns a page given `root`, the relative path back to the site's root; `site` writes it."""
