#!/usr/bin/env python3
"""Lists committed C sources that only forward to another file: once comments,
include guards, conditionals and pragmas are set aside, nothing is left but
#include lines. One tree holds each source once; a package that needs another
layout is generated (make dist), never mirrored in the checkout.
usage: forwarding.py FILE...   (prints the forwarding ones; exit 1 if any)"""
import re
import sys

COND = re.compile(r"^#\s*(if|ifdef|ifndef|elif|else|endif|pragma)\b")


def forwards(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    lines = [l.strip() for l in text.replace("\\\n", " ").split("\n") if l.strip()]
    guards = {m.group(1) for l in lines for m in [re.match(r"^#\s*ifndef\s+(\w+)", l)] if m}
    rest = []
    for l in lines:
        if COND.match(l):
            continue
        m = re.match(r"^#\s*define\s+(\w+)\s*$", l)
        if m and m.group(1) in guards:
            continue
        rest.append(l)
    return bool(rest) and all(re.match(r"^#\s*include\b", l) for l in rest)


bad = [f for f in sys.argv[1:] if forwards(open(f, encoding="utf-8", errors="replace").read())]
for f in bad:
    print(f)
sys.exit(1 if bad else 0)
