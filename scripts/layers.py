#!/usr/bin/env python3
"""Checks that the crate's modules depend on each other one way only, bottom to top, as the
module map in docs/development.md ("Layout") draws them: no file imports a module of a layer
above its own, and modules of one layer do not import each other in a loop. Reads `crate::`
paths from the text (test modules left out). Usage: scripts/layers.py [SRC_DIR]; exit 1 on a
violation, naming the file, the import and both layers."""
import os
import re
import sys

# Bottom to top. A module not listed is an error: every new module is placed on purpose.
LAYERS = [
    ("leaves", ["a2e", "caller", "config", "guard", "keyfile", "naming", "schema", "telemetry", "wake"]),
    ("store", ["store"]),
    ("hub", ["hub"]),
    ("upstream", ["upstream"]),
    ("domain", ["registry", "a2a", "access"]),
    ("services", ["tools", "tasks", "import", "metrics"]),
    ("front ends", ["http", "api", "mcp_server"]),
    ("wiring", ["startup"]),
]
LAYER_OF = {module: (rank, name) for rank, (name, modules) in enumerate(LAYERS) for module in modules}

src = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "src")
problems = []
uses = {}  # module -> modules it imports (same layer only, for the loop check)
for root, _, names in os.walk(src):
    for name in sorted(names):
        if not name.endswith(".rs"):
            continue
        path = os.path.join(root, name)
        rel = os.path.relpath(path, src)
        module = rel.split(os.sep)[0].removesuffix(".rs")
        if module in ("lib", "main"):
            continue
        if module not in LAYER_OF:
            problems.append(f"{rel}: module `{module}` is in no layer (add it to LAYERS in {sys.argv[0]})")
            continue
        text = open(path, encoding="utf-8").read()
        text = re.split(r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*mod\s+\w+\s*\{", text)[0]
        text = re.sub(r"//[^\n]*", "", text)
        targets = set(re.findall(r"\bcrate::([a-z_][a-z0-9_]*)", text))
        for group in re.findall(r"\bcrate::\{([^}]*)\}", text):
            targets |= {part.strip().split("::")[0] for part in group.split(",") if part.strip()}
        rank, layer = LAYER_OF[module]
        for target in sorted(targets - {module}):
            if target not in LAYER_OF:
                continue
            target_rank, target_layer = LAYER_OF[target]
            if target_rank > rank:
                problems.append(f"{rel}: imports `crate::{target}` ({target_layer}) from below it ({layer})")
            elif target_rank == rank:
                uses.setdefault(module, set()).add(target)

# Modules of one layer may use each other, but not in a loop.
def reaches(start, goal, seen):
    for nxt in uses.get(start, ()):
        if nxt == goal or (nxt not in seen and (seen.add(nxt) or reaches(nxt, goal, seen))):
            return True
    return False

for module in sorted(uses):
    if reaches(module, module, set()):
        problems.append(f"`{module}` imports modules of its own layer that import it back")

for problem in problems:
    print(problem)
print(f"{len(problems)} layering problem(s)" if problems else "layers: every import points down")
sys.exit(1 if problems else 0)
