#!/usr/bin/env python3
"""Checks that what a document names exists: every path and every C++ symbol in it.

usage: check_docs.py SOURCE_DIR DOCUMENT...

A path is any word ending in a source or document suffix (.hpp, .ipp, .cpp, .cu, .cmake, .md,
.sh, .py) or a code span ending in "/". It is looked for from the repository's root, then from
include/, include/tdbg/ and tools/; a bare file name anywhere under include/ and tools/. Braces
expand ("src/{core,hook}.hpp" names two files) and "<...>" or "*" mark a pattern, not a path.

A symbol is a code span that reads as a C++ name ("hook_engine::emit_save", "run()",
"rules::rule<Derived>"): its last name must occur as a word in the sources (include/, src/,
tools/, cmake/), in a file where the name before it occurs too. "`name` (path)" says where: the name
must then occur in that file.

Names of other projects that the documents compare with are listed in EXTERNAL.
Exits 1 naming each line that names something missing, 0 when everything exists.
"""

import os
import re
import sys

SUFFIXES = (".hpp", ".ipp", ".cpp", ".cu", ".cmake", ".md", ".sh", ".py")
ROOTS = ("", "include", "include/tdbg", "tools", "docs")
SOURCE_TREES = ("include", "src", "tools", "cmake", "tests", "scripts", "benchmarks", "examples", ".ci", "docs")
TOP_LEVEL = ("CMakeLists.txt", "README.md", "conanfile.py", "vcpkg.json")
MAX_TEXT_BYTES = 1 << 20
# Named for comparison, never defined here.
EXTERNAL = {"io_context", "poll_one", "_prepare_collections", "pread", "xtensor/xarray.hpp", "EMFILE",
            "toolExecutionNotification"}
# Text in code spans that is not a name: options, commands, placeholders.
NOT_A_NAME = re.compile(r"^(--|-|~|tdbg [a-z]|index/|<)|\s")
NAME = re.compile(r"^[A-Za-z_]\w*(::[A-Za-z_]\w*)*$")
PATH_WORD = re.compile(r"[\w./{},<>*~-]+(?:" + "|".join(re.escape(s) for s in SUFFIXES) + r")\b")
CODE_SPAN = re.compile(r"`([^`]+)`")
SAYS_WHERE = re.compile(r"`([^`]+)`\s*\(([\w./-]+\.(?:hpp|ipp|cpp|cu))")


def expand_braces(word):
    match = re.search(r"\{([^{}]*)\}", word)
    if not match:
        return [word]
    head, tail = word[: match.start()], word[match.end():]
    return [w for part in match.group(1).split(",") for w in expand_braces(head + part + tail)]


class Sources:
    def __init__(self, root):
        self.root = root
        self.paths = set()
        self.names = set()
        self.folders = set()
        self.words = {}  # word -> the files it occurs in
        for tree in SOURCE_TREES:
            for folder, subfolders, files in os.walk(os.path.join(root, tree)):
                subfolders[:] = [f for f in subfolders if f != "fixtures"]
                self.folders.add(os.path.basename(folder))
                for name in files:
                    self.add(os.path.join(folder, name))
        for name in TOP_LEVEL:
            if os.path.exists(os.path.join(root, name)):
                self.add(os.path.join(root, name))

    def add(self, path):
        relative = os.path.relpath(path, self.root)
        self.paths.add(relative)
        self.names.add(os.path.basename(path))
        if os.path.getsize(path) > MAX_TEXT_BYTES:
            return
        with open(path, encoding="utf-8", errors="replace") as f:
            for word in set(re.findall(r"\w+", f.read())):
                self.words.setdefault(word, set()).add(relative)

    def find_path(self, word):
        """The file or folder `word` names, relative to the root; None when there is none."""
        for base in ROOTS:
            candidate = os.path.normpath(os.path.join(self.root, base, word))
            if os.path.exists(candidate):
                return os.path.relpath(candidate, self.root)
        bare = word.rstrip("/")
        if "/" not in bare and (bare in self.names or bare in self.folders):
            return bare
        # A path within an area the text is about ("detail/beneath.hpp" under storage/).
        for path in self.paths:
            if path.endswith("/" + bare):
                return path
        return None

    def files_with(self, word):
        return frozenset(self.words.get(word, ()))


def symbol_of(span):
    """The qualified name a code span names ("a::b" of "a::b<T>(x)"), None if it names none."""
    if NOT_A_NAME.search(span):
        return None
    text = re.sub(r"<[^<>]*>", "", span)
    text = re.sub(r"\(.*\)$", "", text).removesuffix(".")
    text = text.removeprefix("tdbg::")
    return text if NAME.match(text) else None


def check(document, sources):
    problems = []
    with open(document, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for number, line in enumerate(lines, 1):
        where = f"{os.path.relpath(document, sources.root)}:{number}"
        spans = CODE_SPAN.findall(line)
        words = set(PATH_WORD.findall(line)) | {s for s in spans if s.endswith("/") and " " not in s}
        for word in words:
            if word in EXTERNAL or word.startswith("~") or "://" in word or "<" in word or "*" in word:
                continue
            for path in expand_braces(word):
                if sources.find_path(path) is None:
                    problems.append(f"{where}: no file or folder {path}")
        for span in spans:
            symbol = symbol_of(span)
            if symbol is None or span in words:
                continue
            parts = symbol.split("::")
            if parts[-1] in EXTERNAL:
                continue
            holders = sources.files_with(parts[-1])
            if len(parts) > 1:
                holders = holders & sources.files_with(parts[-2])
            if not holders:
                problems.append(f"{where}: no source names {symbol}")
        for span, path in SAYS_WHERE.findall(line):
            symbol = symbol_of(span)
            found = sources.find_path(path)
            if symbol is None or found is None or "/" not in found:
                continue
            if found not in sources.files_with(symbol.split("::")[-1]):
                problems.append(f"{where}: {path} does not name {symbol}")
    return problems


def main(argv):
    if len(argv) < 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    sources = Sources(os.path.abspath(argv[1]))
    problems = []
    for document in argv[2:]:
        problems += check(os.path.join(sources.root, document), sources)
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} names in {', '.join(argv[2:])} name nothing in the sources")
        return 1
    print(f"every path and symbol of {', '.join(argv[2:])} exists")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
