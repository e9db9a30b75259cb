#!/usr/bin/env python3
"""The recipes parse: conanfile.py and test_package/conanfile.py compile as Python (what
`python3 -m py_compile` checks), and both vcpkg.json files (the manifest, the port's) validate
against tests/packaging/vcpkg.schema.json, the part of vcpkg's manifest schema they use (with
the jsonschema module where it is installed, else with the validator below, which knows the
keywords that schema uses). Usage: check_recipes.py <tdbg source tree>"""

import json
import os
import re
import sys

TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "integer": int, "null": type(None)}


def errors(value, schema, root, where):
    """The ways `value` breaks `schema` (draft-07 keywords: $ref, type, required, properties,
    additionalProperties, propertyNames, items, oneOf, pattern, minimum)."""
    if "$ref" in schema:
        target = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            target = target[part]
        return errors(value, target, root, where)
    found = []
    kinds = schema.get("type")
    if kinds is not None:
        kinds = kinds if isinstance(kinds, list) else [kinds]
        if not any(isinstance(value, TYPES[k]) and not (k == "integer" and isinstance(value, bool)) for k in kinds):
            return [f"{where}: {value!r} is not of type {kinds}"]
    if "oneOf" in schema:
        matching = [s for s in schema["oneOf"] if not errors(value, s, root, where)]
        if len(matching) != 1:
            found.append(f"{where}: {value!r} matches {len(matching)} of oneOf's schemas, not one")
    if isinstance(value, str) and "pattern" in schema and not re.search(schema["pattern"], value):
        found.append(f"{where}: {value!r} does not match {schema['pattern']}")
    if isinstance(value, int) and "minimum" in schema and value < schema["minimum"]:
        found.append(f"{where}: {value} < {schema['minimum']}")
    if isinstance(value, list) and "items" in schema:
        for index, item in enumerate(value):
            found += errors(item, schema["items"], root, f"{where}[{index}]")
    if isinstance(value, dict):
        found += [f"{where}: lacks {key!r}" for key in schema.get("required", []) if key not in value]
        properties = schema.get("properties", {})
        for key, item in value.items():
            if "propertyNames" in schema:
                found += errors(key, schema["propertyNames"], root, f"{where} key")
            if key in properties:
                found += errors(item, properties[key], root, f"{where}.{key}")
            elif schema.get("additionalProperties") is False:
                found.append(f"{where}: unknown property {key!r}")
            elif isinstance(schema.get("additionalProperties"), dict):
                found += errors(item, schema["additionalProperties"], root, f"{where}.{key}")
    return found


def main():
    root = sys.argv[1]
    for recipe in ("conanfile.py", os.path.join("test_package", "conanfile.py")):
        with open(os.path.join(root, recipe), encoding="utf-8") as f:
            compile(f.read(), recipe, "exec")
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "vcpkg.schema.json"), encoding="utf-8") as f:
        schema = json.load(f)
    failed = False
    for manifest in ("vcpkg.json", os.path.join("ports", "tdbg", "vcpkg.json")):
        with open(os.path.join(root, manifest), encoding="utf-8") as f:
            document = json.load(f)
        try:
            import jsonschema  # pylint: disable=import-outside-toplevel
            problems = [error.message for error in jsonschema.Draft7Validator(schema).iter_errors(document)]
        except ImportError:
            problems = errors(document, schema, schema, manifest)
        for problem in problems:
            print(f"{manifest}: {problem}")
            failed = True
    if failed:
        sys.exit(1)
    print("conanfile.py and test_package/conanfile.py compile; vcpkg.json and ports/tdbg/vcpkg.json validate")


if __name__ == "__main__":
    main()
