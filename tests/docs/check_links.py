#!/usr/bin/python3
"""Every relative link and image in README.md, CHANGELOG.md and docs/ resolves (ctest
docs_links).

A link resolves when its file exists and, with a #fragment, when the target Markdown file
(or the linking file itself, for a bare #fragment) has a heading whose anchor is that
fragment under both GitHub's and MkDocs' rules (python-markdown's toc slugify), so that
the link works on GitHub and in the site scripts/build-docs.sh builds; explicit
<a id="..."> / <a name="..."> anchors count too. Pages under docs/ must not link outside
docs/ (the site holds docs/ only), and docs/pending/ (notes of branches in flight, not
part of the site) is not checked. Absolute URLs (http:, https:, mailto:, ...) are not
fetched.

Usage: check_links.py [REPO_ROOT]   (default: two folders up from this file)
Prints one line per broken link, "file:line: target: reason", and exits 1 if any. It first
checks itself on a small tree of good and broken links (the negative control: a checker
that finds nothing wrong there is broken), then the repository.
"""
import os
import re
import sys
import tempfile
import unicodedata

ROOT = DOCS = None
SKIP = []


def set_root(root):
    global ROOT, DOCS, SKIP
    ROOT = os.path.abspath(root)
    DOCS = os.path.join(ROOT, "docs")
    SKIP = [os.path.join(DOCS, "pending")]
    _anchor_cache.clear()

FENCE = re.compile(r"^\s*(```|~~~)")
ATX = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
INLINE_CODE = re.compile(r"(`+)(.+?)\1")
# [text](target "title") and ![alt](target): the target up to whitespace or ')'.
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'(][^)]*)?\)")
REFERENCE_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HTML_LINK = re.compile(r"<(?:a|img)\b[^>]*?\b(?:href|src)\s*=\s*[\"']([^\"']+)[\"']", re.I)
HTML_ANCHOR = re.compile(r"<a\b[^>]*?\b(?:id|name)\s*=\s*[\"']([^\"']+)[\"']", re.I)
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def markdown_lines(path):
    """(line number, text, text with inline code spans blanked out) of the lines outside
    fenced and indented code blocks."""
    out = []
    in_fence = False
    previous_blank = True
    in_indented = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if FENCE.match(line):
                in_fence = not in_fence
                previous_blank = False
                continue
            if in_fence:
                continue
            blank = not line.strip()
            indented = line.startswith("    ") or line.startswith("\t")
            if indented and (previous_blank or in_indented) and not in_list_context(out):
                in_indented = True
                previous_blank = blank
                continue
            if not blank:
                in_indented = False
            previous_blank = blank
            out.append((number, line, INLINE_CODE.sub(lambda m: " " * len(m.group(0)), line)))
    return out


def in_list_context(lines):
    """Whether the last non-blank line kept is part of a list item (indented text under a
    list item is a continuation, not code)."""
    for _, text, _ in reversed(lines):
        if text.strip():
            return bool(re.match(r"^\s*([-*+]|\d+[.)])\s", text)) or text.startswith("  ")
    return False


def heading_text(raw):
    """The text a heading renders to: links to their text, no code or emphasis marks."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", raw)
    text = text.replace("`", "").replace("**", "").replace("*", "")
    text = re.sub(r"<[^>]+>", "", text)
    return text.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")


def github_slug(text):
    """GitHub's heading anchor: lower case, punctuation but '-' and '_' dropped, each space
    a '-' (runs are not collapsed)."""
    text = text.strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in "-_ ")
    return text.replace(" ", "-")


def mkdocs_slug(text):
    """python-markdown's toc.slugify (MkDocs' default): ASCII only, punctuation but '-' and
    '_' dropped, runs of spaces and '-' collapsed into one '-'."""
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


_anchor_cache = {}


def anchors(path):
    """The fragments that resolve in the Markdown file at path: those whose GitHub and
    MkDocs anchors agree (duplicates numbered as each renderer does), and explicit HTML
    anchors."""
    if path in _anchor_cache:
        return _anchor_cache[path]
    github, mkdocs = [], []
    explicit = set()
    seen_github, seen_mkdocs = {}, {}
    for _, line, blanked in markdown_lines(path):
        explicit.update(HTML_ANCHOR.findall(blanked))
        m = ATX.match(line)
        if not m:
            continue
        text = heading_text(m.group(2))
        g, k = github_slug(text), mkdocs_slug(text)
        n = seen_github.get(g, 0)
        seen_github[g] = n + 1
        github.append(g if n == 0 else f"{g}-{n}")
        n = seen_mkdocs.get(k, 0)
        seen_mkdocs[k] = n + 1
        mkdocs.append(k if n == 0 else f"{k}_{n}")
    both = {g for g, k in zip(github, mkdocs) if g == k}
    _anchor_cache[path] = (both | explicit, set(github) | set(mkdocs))
    return _anchor_cache[path]


def check_file(path):
    problems = []
    rel = os.path.relpath(path, ROOT)
    under_docs = path.startswith(DOCS + os.sep)
    for number, _, line in markdown_lines(path):
        targets = INLINE_LINK.findall(line) + HTML_LINK.findall(line)
        m = REFERENCE_DEF.match(line)
        if m:
            targets.append(m.group(1))
        for target in targets:
            if SCHEME.match(target) or target.startswith("//"):
                continue
            file_part, _, fragment = target.partition("#")
            if file_part:
                resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part))
                if not os.path.exists(resolved):
                    problems.append(f"{rel}:{number}: {target}: no such file")
                    continue
                if under_docs and not resolved.startswith(DOCS + os.sep):
                    problems.append(f"{rel}:{number}: {target}: outside docs/, which the site "
                                    "does not hold (name the file in code format instead)")
                    continue
            else:
                resolved = path
            if fragment:
                if not resolved.endswith(".md") or os.path.isdir(resolved):
                    problems.append(f"{rel}:{number}: {target}: a fragment on a non-Markdown target")
                    continue
                good, either = anchors(resolved)
                if fragment not in good:
                    why = ("the heading's GitHub and MkDocs anchors differ: simplify the heading"
                           if fragment in either else "no such heading")
                    problems.append(f"{rel}:{number}: {target}: {why}")
    return problems


def markdown_files():
    files = [os.path.join(ROOT, name) for name in ("README.md", "CHANGELOG.md")
             if os.path.exists(os.path.join(ROOT, name))]
    for folder, dirs, names in os.walk(DOCS):
        if any(folder == s or folder.startswith(s + os.sep) for s in SKIP):
            dirs[:] = []
            continue
        dirs.sort()
        files += [os.path.join(folder, n) for n in sorted(names) if n.endswith(".md")]
    return files


SELF_TEST = {
    "README.md": "[ok](docs/a.md#a-heading) [ok](docs/img.png) [bad](docs/missing.md)\n"
                 "`[not a link](nowhere.md)`\n",
    "docs/a.md": "# A heading\n\n## Self- and body-body contact\n\n"
                 "[bad](#no-such-heading) [differs](#self--and-body-body-contact)\n"
                 "[outside](../README.md) ![bad image](gone.png)\n\n"
                 "    [indented code](nowhere.md)\n",
    "docs/img.png": "",
    "docs/pending/x.md": "[ignored](nowhere.md)\n",
}
SELF_TEST_EXPECTED = ["README.md:1: docs/missing.md: no such file",
                      "docs/a.md:5: #no-such-heading: no such heading",
                      "docs/a.md:5: #self--and-body-body-contact: the heading's GitHub and "
                      "MkDocs anchors differ: simplify the heading",
                      "docs/a.md:6: ../README.md: outside docs/",
                      "docs/a.md:6: gone.png: no such file"]


def self_test():
    """The checker on SELF_TEST must report exactly SELF_TEST_EXPECTED (line prefixes)."""
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in SELF_TEST.items():
            os.makedirs(os.path.dirname(os.path.join(tmp, name)), exist_ok=True)
            with open(os.path.join(tmp, name), "w") as f:
                f.write(text)
        set_root(tmp)
        found = [p for f in markdown_files() for p in check_file(f)]
    ok = len(found) == len(SELF_TEST_EXPECTED) and all(
        p.startswith(e) for p, e in zip(found, SELF_TEST_EXPECTED))
    if not ok:
        print("check_links: the self-test found\n  " + "\n  ".join(found) +
              "\nwhere it expected\n  " + "\n  ".join(SELF_TEST_EXPECTED))
    return ok


def main():
    if not self_test():
        return 1
    set_root(sys.argv[1] if len(sys.argv) > 1 else
             os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    files = markdown_files()
    if not files or not os.path.isdir(DOCS):
        print(f"check_links: no README.md or docs/ under {ROOT}")
        return 1
    problems = [p for f in files for p in check_file(f)]
    for p in problems:
        print(p)
    print(f"check_links: {len(files)} files, {len(problems)} broken link(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
