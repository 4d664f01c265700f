#!/usr/bin/env python3
"""Check the links of README.md, BENCHMARKS.md and the book (docs/**/*.md).

Every relative link must name a file or directory that exists, and every `#anchor` must match a heading of the
target Markdown file, slugged as GitHub does (lower case, spaces to '-', punctuation other than '-' and '_'
dropped, a repeated heading numbered -1, -2, ...). Links to other sites (a scheme such as https:) are not
fetched. Prints each broken link as file:line and exits 1 when there is one. Python 3 standard library only.
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# [text](target) and ![alt](target), the target up to a space (a title may follow) or the closing parenthesis.
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def documents():
    yield ROOT / "README.md"
    yield ROOT / "BENCHMARKS.md"
    yield from sorted((ROOT / "docs").rglob("*.md"))


def prose_lines(path):
    """(line number, line) of the lines outside fenced code blocks, inline code spans blanked."""
    fence = None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        match = FENCE.match(line)
        if match:
            if fence is None:
                fence = match.group(1)
            elif match.group(1) == fence:
                fence = None
            continue
        if fence is None:
            yield number, re.sub(r"`[^`]*`", lambda m: " " * len(m.group(0)), line)


def slug(text):
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link in a heading counts by its text
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


_anchors = {}


def anchors(path):
    """The anchors of a Markdown file's headings (cached)."""
    if path not in _anchors:
        found, seen = set(), {}
        fence = None
        for line in path.read_text(encoding="utf-8").splitlines():
            match = FENCE.match(line)
            if match:
                if fence is None:
                    fence = match.group(1)
                elif match.group(1) == fence:
                    fence = None
                continue
            heading = HEADING.match(line) if fence is None else None
            if heading:
                base = slug(heading.group(2))
                count = seen.get(base, 0)
                seen[base] = count + 1
                found.add(base if count == 0 else f"{base}-{count}")
        _anchors[path] = found
    return _anchors[path]


def check(path):
    broken = []
    for number, line in prose_lines(path):
        for match in LINK.finditer(line):
            target = match.group(1)
            if SCHEME.match(target):
                continue
            file_part, _, anchor = target.partition("#")
            where = f"{path.relative_to(ROOT)}:{number}: {target}"
            dest = (path.parent / file_part).resolve() if file_part else path
            if not dest.exists():
                broken.append(f"{where}: no such file")
                continue
            if anchor:
                if dest.is_dir() or dest.suffix != ".md":
                    broken.append(f"{where}: an anchor into a file that is not Markdown")
                elif anchor not in anchors(dest):
                    broken.append(f"{where}: no heading with the anchor #{anchor} in {dest.relative_to(ROOT)}")
    return broken


def main():
    broken = [problem for path in documents() for problem in check(path)]
    for problem in broken:
        print(problem)
    if broken:
        print(f"doc-links: {len(broken)} broken link(s)", file=sys.stderr)
        return 1
    print("doc-links: every link resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main())
