import json
from collections import Counter
from pathlib import Path

words = [w.strip(".,;:!?").lower() for w in Path("words.txt").read_text(encoding="utf-8").split()]
counts = Counter(w for w in words if w)
top = min(counts, key=lambda w: (-counts[w], w))
print(json.dumps({"words": sum(counts.values()), "distinct": len(counts), "top": top}))
