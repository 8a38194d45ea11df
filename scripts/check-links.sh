#!/usr/bin/env bash
# scripts/check-links.sh - check the links between the project's Markdown
# files, and that every guide keeps a contents list.
#
# usage: scripts/check-links.sh [FILE.md]...
#
# For README.md and docs/*.md (or the files given), checks that:
#   - every relative link, [text](path), [text](path#anchor) or
#     [text](#anchor), and every reference definition, names a file or
#     directory that exists, relative to the file that links;
#   - every #anchor into a Markdown file is a heading of that file, by
#     GitHub's rules: the heading's text as it is shown, lowercased, with
#     everything but letters, digits, '_', '-' and spaces dropped, spaces
#     turned into '-', and "-1", "-2", ... added to repeated ones;
#   - a file with a "## Contents" section links from it to each of its
#     other "## " sections.
# Links to other sites (http:, https:, mailto:) are not fetched.  Code
# blocks and `code spans` are skipped.  Prints each problem as
# file:line: message and exits 1 if there is one.  Needs only python3.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [ $# -eq 0 ]; then
	set -- README.md docs/*.md
fi

exec python3 - "$@" <<'PYTHON'
import os
import re
import sys
import unicodedata

FENCE = re.compile(r'^ {0,3}(`{3,}|~{3,})')
HEADING = re.compile(r'^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$')
CODE_SPAN = re.compile(r'(`+)(.+?)\1')
INLINE_LINK = re.compile(r'!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*(<[^>]*>|[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)(?:\s+"[^"]*")?\s*\)')
REF_DEF = re.compile(r'^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)')
HTML_ANCHOR = re.compile(r'<a\s[^>]*(?:name|id)\s*=\s*"([^"]+)"', re.I)
SCHEME = re.compile(r'^[A-Za-z][A-Za-z0-9+.-]*:')


def lines_outside_code(text):
    """(line number, line) for each line that is not inside a fenced code block."""
    fence = None
    for number, line in enumerate(text.split('\n'), 1):
        m = FENCE.match(line)
        if fence is None:
            if m:
                fence = m.group(1)
                continue
            yield number, line
        elif m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) \
                and line.strip() == m.group(1):
            fence = None


def slug(heading):
    """GitHub's anchor for a heading's Markdown text (without the #s)."""
    text = INLINE_LINK.sub(lambda m: m.group(1), heading)
    text = CODE_SPAN.sub(lambda m: m.group(2), text)
    text = re.sub(r'<[^>]+>', '', text).lower()
    kept = ''.join(c for c in text
                   if c in ' -' or unicodedata.category(c)[0] in 'LMN'
                   or unicodedata.category(c) == 'Pc')
    return kept.replace(' ', '-')


anchors_of = {}


def anchors(path):
    """The anchors a Markdown file offers, and its headings as (line, level, text)."""
    if path not in anchors_of:
        with open(path, encoding='utf-8') as f:
            text = f.read()
        found, headings, seen = set(), [], {}
        for number, line in lines_outside_code(text):
            m = HEADING.match(line)
            if m:
                base = slug(m.group(2))
                n = seen.get(base, 0)
                seen[base] = n + 1
                found.add(base if n == 0 else '%s-%d' % (base, n))
                headings.append((number, len(m.group(1)), m.group(2)))
            for name in HTML_ANCHOR.findall(line):
                found.add(name)
        anchors_of[path] = (found, headings)
    return anchors_of[path]


def links(text):
    """(line number, target) of every link outside code."""
    for number, line in lines_outside_code(text):
        bare = CODE_SPAN.sub('', line)
        m = REF_DEF.match(bare)
        if m:
            yield number, m.group(1)
        for m in INLINE_LINK.finditer(bare):
            yield number, m.group(2)


problems = 0


def problem(path, number, message):
    global problems
    problems += 1
    print('%s:%d: %s' % (path, number, message))


def check_links(path):
    with open(path, encoding='utf-8') as f:
        text = f.read()
    for number, target in links(text):
        target = target.strip('<>')
        if not target or SCHEME.match(target):
            continue
        file_part, _, anchor = target.partition('#')
        if file_part:
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part))
            if not os.path.exists(dest):
                problem(path, number, 'link to a missing file: %s' % target)
                continue
        else:
            dest = path
        if not anchor:
            continue
        if not dest.endswith('.md'):
            if not re.fullmatch(r'L\d+(-L\d+)?', anchor):
                problem(path, number, 'anchor into a file that is not Markdown: %s' % target)
            continue
        if anchor not in anchors(dest)[0]:
            problem(path, number, 'no heading in %s has the anchor #%s' % (dest, anchor))


def check_contents(path):
    with open(path, encoding='utf-8') as f:
        text = f.read()
    _, headings = anchors(path)
    sections = [(n, t) for n, level, t in headings if level == 2]
    starts = [n for n, t in sections if t.strip() == 'Contents']
    if not starts:
        return
    start = starts[0]
    end = min([n for n, _, _ in headings if n > start] or [len(text.split('\n')) + 1])
    listed = set()
    for number, target in links(text):
        if start < number < end and target.startswith('#'):
            listed.add(target[1:])
    for number, title in sections:
        if number != start and slug(title) not in listed:
            problem(path, number, 'section "%s" is not in the contents list' % title)


for path in sys.argv[1:]:
    if not os.path.isfile(path):
        problem(path, 0, 'no such file')
        continue
    check_links(path)
    check_contents(path)

sys.stdout.flush()
if problems:
    print('%d problem(s) in the links of %s' % (problems, ' '.join(sys.argv[1:])), file=sys.stderr)
    sys.exit(1)
PYTHON
