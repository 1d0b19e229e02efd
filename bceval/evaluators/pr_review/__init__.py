"""The pr-review evaluator: BC-Bench's code-review entries, reviewed as whole changes (docs/pr-review.md)."""
