"""test/packaging: the checks run.sh hands to lib.sh's check, one per call.

    checks.py COMMAND ARGS...    exit 0 when the check holds, else 1 with
                                 the reason on stderr

Commands:
  losses OUT                 OUT holds 5 "loss S BITS" lines, S = 0..4, and
                             one "params HASH"; the last loss is below the first
  flags ROOT CORE_CFLAGS CCJSON
                             every object of ROOT/core/ in compile_commands.json
                             has exactly the Makefile's CORE_CFLAGS, less -O/-I
  private ROOT CCJSON        core's own flags reach core's objects only, and
                             no object gets -Werror
"""
import json
import os
import re
import shlex
import struct
import sys


def fail(msg):
    print("  " + msg, file=sys.stderr)
    sys.exit(1)


def losses(path):
    lines = open(path).read().split("\n")
    loss = [l.split() for l in lines if l.startswith("loss ")]
    par = [l for l in lines if l.startswith("params ")]
    if [int(l[1]) for l in loss] != list(range(5)) or len(par) != 1:
        fail("%s: expected loss lines 0..4 and one params line" % path)
    vals = [struct.unpack("<f", struct.pack("<I", int(l[2], 16)))[0] for l in loss]
    if not vals[-1] < vals[0]:
        fail("loss did not fall: %s" % vals)


def core_objects(root, ccjson):
    """(file, flags) of ROOT/core's objects, and of the others"""
    core, other = [], []
    for e in json.load(open(ccjson)):
        words = shlex.split(e["command"])[1:]
        kept, skip = set(), False
        for w in words:
            if skip:
                skip = False
            elif w in ("-o", "-c", "-MF", "-MT", "-MQ"):
                skip = True
            elif not re.match(r"-(I|D|O|g$|MD$|MMD$)", w):
                kept.add(w)
        f = os.path.realpath(e["file"])
        in_core = os.path.dirname(f) == os.path.realpath(os.path.join(root, "core"))
        (core if in_core else other).append((f, kept))
    return core, other


def flags(root, core_cflags, ccjson):
    make = {w for w in core_cflags.split() if not re.match(r"-(I|O)", w)}
    core, _ = core_objects(root, ccjson)
    if not core:
        fail("no core objects in " + ccjson)
    for f, got in core:
        if got != make:
            fail("%s: CMake adds %s, lacks %s (vs the Makefile's CORE_CFLAGS)"
                 % (os.path.basename(f), sorted(got - make) or "nothing",
                    sorted(make - got) or "nothing"))


def private(root, ccjson):
    own = {"-ffp-contract=off", "-fno-math-errno", "-ffreestanding", "-std=c99"}
    core, other = core_objects(root, ccjson)
    for f, got in core:
        if not own <= got or "-Werror" in got:
            fail("%s: flags %s" % (f, sorted(got)))
    mine = [(f, got) for f, got in other if "/test/packaging/consumer/" in f]
    if not mine:
        fail("no consumer objects in " + ccjson)
    for f, got in mine + other:
        if "-Werror" in got:
            fail("%s gets -Werror" % f)
    for f, got in mine:
        if got & own:
            fail("%s gets core's %s" % (f, sorted(got & own)))


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"losses": losses, "flags": flags, "private": private}[cmd](*args)
