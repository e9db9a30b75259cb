#!/usr/bin/env python3
"""compile_commands.json lists only what the build compiles: every entry's object file is one
that `ninja -t commands all` (the commands a build of `all` runs) writes. An entry no build of
`all` compiles is a file clangd and clang-tidy would check with flags no build uses
(cmake/tdbg_compile_commands.cmake).

Usage: check_compile_commands.py <build directory> <ninja>
Exit status: 0 when every entry is built, 1 otherwise (naming each), 2 on a usage error."""

import json
import shlex
import subprocess
import sys
from pathlib import Path


def object_of(command: str) -> str:
    """The object file a compile command writes (its -o argument)."""
    words = shlex.split(command)
    for i, word in enumerate(words[:-1]):
        if word == "-o":
            return words[i + 1]
    return ""


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    build, ninja = Path(sys.argv[1]), sys.argv[2]
    entries = json.loads((build / "compile_commands.json").read_text())
    commands = subprocess.run([ninja, "-C", str(build), "-t", "commands", "all"], check=True,
                              capture_output=True, text=True).stdout
    written = set()
    for line in commands.splitlines():
        written.add(object_of(line))
    never_built = [entry["file"] for entry in entries if object_of(entry["command"]) not in written]
    if never_built:
        print(f"compile_commands.json lists {len(never_built)} of its {len(entries)} files that a build of "
              "`all` never compiles:")
        for file in never_built:
            print(f"  {file}")
        return 1
    print(f"compile_commands.json: each of its {len(entries)} files is compiled by a build of `all`")
    return 0


if __name__ == "__main__":
    sys.exit(main())
