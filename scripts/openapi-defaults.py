"""Fails when a schema of an OpenAPI document carries a `default` that its own constraints
refuse (a `pattern`, a `minLength`, an `enum`, bounds, the type). Usage: openapi-defaults.py FILE.

Every schema is checked on its own, with JSON Schema (Draft 2020-12, as OpenAPI 3.1 uses):
the document's `components` are put beside it, so its `$ref`s resolve and a default that a
referenced schema refuses is found too.
"""

import json
import sys

import jsonschema


def main(path):
    with open(path) as f:
        doc = json.load(f)
    problems = []

    def walk(node, where):
        if isinstance(node, dict):
            # (`default` under `responses` is the default response, not a schema's default.)
            if "default" in node and not where.endswith("/responses"):
                schema = {k: v for k, v in node.items() if k not in ("default", "example", "examples")}
                schema["components"] = doc.get("components", {})
                try:
                    validator = jsonschema.Draft202012Validator(schema)
                    errors = list(validator.iter_errors(node["default"]))
                except Exception as e:  # a schema the validator cannot read is a problem too
                    errors = [e]
                for error in errors:
                    message = getattr(error, "message", str(error))
                    problems.append(f"{where}: default {json.dumps(node['default'])}: {message}")
            for key, value in node.items():
                walk(value, f"{where}/{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{where}/{i}")

    walk(doc.get("components", {}), "#/components")
    walk(doc.get("paths", {}), "#/paths")
    for problem in problems:
        print(problem)
    print(f"defaults: {len(problems)} that break their own schema")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
