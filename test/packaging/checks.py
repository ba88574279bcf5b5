"""test/packaging: the checks run.sh hands to lib.sh's check, one per call.

    checks.py COMMAND ARGS...    exit 0 when the check holds, else 1 with
                                 the reason on stderr

Commands:
  losses OUT                 OUT holds 5 "loss S BITS" lines, S = 0..4, and
                             one "params HASH"; the last loss is below the first
  flags ROOT CORE_CFLAGS HOST_ARCH CCJSON
                             every object of ROOT/core/ in compile_commands.json
                             has exactly the Makefile's CORE_CFLAGS, less -O/-I
                             (HOST_ARCH, given as CMAKE_C_FLAGS, set aside)
  private ROOT CCJSON        core's own flags reach core's objects only, and
                             no object gets -Werror
  pio ROOT VERSION FLAGS     library.json
  arduino ROOT VERSION [URL] library.properties (and src/, its header); url URL or empty
  idf ROOT VERSION           idf_component.yml
  zephyr ROOT                zephyr/module.yml
  kconfig ROOT OUTDIR        Kconfig and zephyr/Kconfig through kconfiglib;
                             writes OUTDIR/{zephyr,idf}.cmake with the
                             CONFIG_ values of a configuration with the lwIP
                             transport chosen
  registered LIST ROOT LWIP  the sources a Zephyr or ESP-IDF stand-in recorded
                             exist and are core/*.c (+ port/lwip/*.c if LWIP=1)
"""
import glob
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


def flags(root, core_cflags, host_arch, ccjson):
    make = {w for w in core_cflags.split() if not re.match(r"-(I|O)", w)}
    core, _ = core_objects(root, ccjson)
    if not core:
        fail("no core objects in " + ccjson)
    for f, got in core:
        got = got - set(host_arch.split())
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


def exists(root, rel, what):
    if not os.path.exists(os.path.join(root, rel)):
        fail("%s names %s, which does not exist" % (what, rel))


def pio(root, version, core_flags):
    m = json.load(open(os.path.join(root, "library.json")))
    b = m.get("build", {})
    if m.get("name") != "tinyring" or m.get("version") != version:
        fail("library.json: name %r version %r (want tinyring %s)"
             % (m.get("name"), m.get("version"), version))
    if b.get("flags") != core_flags.split():
        fail("library.json build.flags %s != cmake's %s" % (b.get("flags"), core_flags))
    src = os.path.join(root, b.get("srcDir", "src"))
    exists(root, b.get("srcDir", "src"), "build.srcDir")
    exists(root, b.get("includeDir", "include"), "build.includeDir")
    exists(os.path.join(root, b.get("includeDir", "include")), m.get("headers"), "headers")
    for p in m.get("export", {}).get("include", []):
        exists(root, p, "export.include")
    # srcFilter: +<glob> / -<glob>, applied in order, relative to srcDir
    sel = set()
    for item in b.get("srcFilter", []):
        for sign, pat in re.findall(r"([+-])<([^>]*)>", item):
            hits = {os.path.relpath(p, src) for p in glob.glob(os.path.join(src, pat))}
            if sign == "+" and not hits:
                fail("srcFilter %s%s matches nothing" % (sign, pat))
            sel = sel | hits if sign == "+" else sel - hits
    core = {os.path.relpath(p, src) for p in glob.glob(os.path.join(root, "core", "*.c"))}
    if sel != core:
        fail("srcFilter selects %s, not core/*.c" % sorted(sel ^ core))


def arduino(root, version, url=""):
    props = {}
    for line in open(os.path.join(root, "library.properties"), encoding="utf-8"):
        line = line.rstrip("\n")
        if line and not line.startswith("#"):
            if "=" not in line:
                fail("library.properties: not key=value: %r" % line)
            k, v = line.split("=", 1)
            props[k] = v
    # the fields the Arduino Library Manager requires (arduino-lint: a
    # missing url is its error LP040); url may be empty (make dist without
    # TR_DIST_URL: no home to name) but not missing (Arduino IDE 1.x refuses)
    for k in ("name", "version", "author", "maintainer", "sentence", "paragraph",
              "category", "architectures"):
        if not props.get(k):
            fail("library.properties: no %s" % k)
    if "url" not in props:
        fail("library.properties: no url key")
    if props["url"] != url:
        fail("library.properties: url %r, expected %r" % (props["url"], url))
    if not re.match(r"^[A-Za-z0-9][A-Za-z0-9 _.-]*$", props["name"]):
        fail("library.properties: bad name %r" % props["name"])
    if props["version"] != version:
        fail("library.properties: version %s, core/include/tinyring.h says %s" % (props["version"], version))
    cats = {"Display", "Communication", "Signal Input/Output", "Sensors",
            "Device Control", "Timing", "Data Storage", "Data Processing", "Other"}
    if props["category"] not in cats:
        fail("library.properties: category %r" % props["category"])
    for h in props.get("includes", "").split(","):
        if h.strip():
            exists(root, os.path.join("src", h.strip()), "includes")


def idf(root, version):
    import yaml
    m = yaml.safe_load(open(os.path.join(root, "idf_component.yml")))
    if m.get("version") != version:
        fail("idf_component.yml: version %r, core/include/tinyring.h says %s" % (m.get("version"), version))
    if not isinstance(m.get("dependencies", {}), dict) or "idf" not in m["dependencies"]:
        fail("idf_component.yml: no dependencies.idf")
    files = m.get("files", {})
    for p in files.get("include", []) + files.get("exclude", []):
        head = p.split("/")[0]
        if "*" not in head:
            exists(root, head, "files pattern " + p)
    for k in ("CMakeLists.txt", "Kconfig"):
        exists(root, k, "the component")


def zephyr(root):
    import yaml
    m = yaml.safe_load(open(os.path.join(root, "zephyr", "module.yml")))
    known = {"name", "build", "tests", "samples", "boards", "blobs", "package-managers", "security"}
    if set(m) - known:
        fail("module.yml: unknown keys %s" % sorted(set(m) - known))
    if not re.match(r"^[A-Za-z0-9_.-]+$", str(m.get("name", ""))):
        fail("module.yml: name %r" % m.get("name"))
    b = m.get("build", {})
    if not isinstance(b.get("cmake"), str) or not isinstance(b.get("kconfig"), str):
        fail("module.yml: build.cmake and build.kconfig must be paths")
    exists(root, os.path.join(b["cmake"], "CMakeLists.txt"), "build.cmake")
    exists(root, b["kconfig"], "build.kconfig")


def kconfig(root, outdir):
    import kconfiglib
    os.environ.setdefault("srctree", root)
    for top, gate, name in (("zephyr/Kconfig", "TINYRING", "zephyr"), ("Kconfig", None, "idf")):
        k = kconfiglib.Kconfig(os.path.join(root, top), warn_to_stderr=False)
        if k.warnings:
            fail("%s: %s" % (top, "; ".join(k.warnings)))
        if gate:
            if k.syms[gate].tri_value != 0:
                fail("%s: %s is on by default" % (top, gate))
            k.syms[gate].set_value(2)
        none, lwip = k.syms["TINYRING_TRANSPORT_NONE"], k.syms["TINYRING_TRANSPORT_LWIP"]
        if none.tri_value != 2 or lwip.tri_value != 0:
            fail("%s: the default transport is not none" % top)
        lwip.set_value(2)
        if lwip.tri_value != 2 or none.tri_value != 0:
            fail("%s: the lwIP transport cannot be chosen" % top)
        with open(os.path.join(outdir, name + ".cmake"), "w") as out:
            for s in k.unique_defined_syms:
                if s.name.startswith("TINYRING") and s.str_value == "y":
                    out.write("set(CONFIG_%s y)\n" % s.name)


def registered(listfile, root, lwip):
    got = [l.strip() for l in open(listfile) if l.strip()]
    for p in got:
        if not os.path.isfile(p):
            fail("registered %s, which does not exist" % p)
    want = glob.glob(os.path.join(root, "core", "*.c"))
    if lwip == "1":
        want += glob.glob(os.path.join(root, "port", "lwip", "*.c"))
    norm = lambda ps: sorted(os.path.realpath(p) for p in ps)
    if norm(got) != norm(want):
        fail("registered sources differ from the tree: %s" % sorted(set(norm(got)) ^ set(norm(want))))


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"losses": losses, "flags": flags, "private": private, "pio": pio,
     "arduino": arduino, "idf": idf, "zephyr": zephyr, "kconfig": kconfig,
     "registered": registered}[cmd](*args)
