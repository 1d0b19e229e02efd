"""STAND-IN for `alc` (no AL compiler here): every .al file must be AL-shaped text, and every object named with
--object KIND:NAME must be declared. Exit 0 when it all holds, 1 otherwise (one line per problem)."""

import re
import sys
from pathlib import Path

DECLARATION = re.compile(r'^\s*(table|page|codeunit|tableextension|pageextension|enum|report|query|xmlport|'
                         r'permissionset)\s+\d+\s+("[^"]+"|\w+)', re.IGNORECASE)


def main(argv: list[str]) -> int:
    wanted = [argv[i + 1] for i, a in enumerate(argv) if a == "--object" and i + 1 < len(argv)]
    declared, problems = set(), []
    for path in sorted(Path.cwd().rglob("*.al")):
        text = path.read_text(encoding="utf-8", errors="replace")
        rel = path.relative_to(Path.cwd()).as_posix()
        found = DECLARATION.match(text)
        if not found:
            problems.append(f"{rel}: no object declaration")
            continue
        declared.add(f"{found[1].lower()}:{found[2].strip(chr(34)).lower()}")
        if text.count("{") != text.count("}"):
            problems.append(f"{rel}: unbalanced braces")
        if len(re.findall(r"\bbegin\b", text, re.I)) > len(re.findall(r"\bend\b", text, re.I)):
            problems.append(f"{rel}: begin without end")
    problems += [f"object {w} is not declared" for w in wanted if w.lower() not in declared]
    for problem in problems:
        print(f"error: {problem}")
    print("stand-in compile: " + ("failed" if problems else "ok"))
    return 1 if problems else 0


sys.exit(main(sys.argv[1:]))
