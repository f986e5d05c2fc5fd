#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# make install / make uninstall as a packager and a library user meet them:
# stage an install with DESTDIR, build libhost/examples/loopback.c against
# the *installed* header and library through pkg-config (shared and
# static), run it (a ring allreduce on 5 hosts, exact on every host), check
# the soname and that the shared library exports only canary_host.h (and
# the static one only lh_ names); then
# install under another PREFIX with LIBDIR moved, and uninstall both,
# leaving no file behind.
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from buildcfg import config  # noqa: E402
from tap import count, exit_status, ok, skip  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def lh_version():
    """libhost/Makefile.inc's LH_ABI and LH_VERSION ("$(LH_ABI).m.p"): the soname and the file's version."""
    with open(os.path.join(ROOT, "libhost", "Makefile.inc")) as f:
        text = f.read()
    abi = re.search(r"^LH_ABI = (\d+)$", text, re.M).group(1)
    ver = re.search(r"^LH_VERSION = (.*)$", text, re.M).group(1).replace("$(LH_ABI)", abi)
    return abi, ver


ABI, VER = lh_version()
SO = "libcanaryhost.so." + ABI            # the soname
SOV = "libcanaryhost.so." + VER           # the file


def run(cmd, env=None, cwd=ROOT):
    e = dict(os.environ)
    for k in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL"):	# not the jobserver of an enclosing make check
        e.pop(k, None)
    e.update(env or {})
    p = subprocess.run(cmd, cwd=cwd, env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=600)
    return p.returncode, p.stdout


def files_under(d):
    return sorted(os.path.relpath(os.path.join(r, f), d) for r, _, fs in os.walk(d) for f in fs)


def dirs_under(d):
    return sorted(os.path.relpath(os.path.join(r, s), d) for r, ds, _ in os.walk(d) for s in ds)


PLAN = 17


def main():
    for tool in ("pkg-config", "make"):
        if not shutil.which(tool):
            print("1..0 # SKIP %s not installed" % tool)
            return 0
    if not os.path.exists(os.path.join(ROOT, "config.mk")):
        print("1..0 # SKIP not configured")
        return 0
    cfg = config()
    cc = cfg.get("CC", "cc").split()
    san_c = cfg.get("SAN_CFLAGS", "").split()
    san_ld = cfg.get("SAN_LDFLAGS", "").split()
    print("1..%d" % PLAN)
    lib = os.path.join(ROOT, "libhost")
    srcs = [os.path.join(d, f) for d in (lib, os.path.join(lib, "tools")) for f in sorted(os.listdir(d))
            if f.endswith((".c", ".h"))]
    reach = [f for f in srcs if re.search(r'#include "(emu|topologies)/', open(f).read())]
    ok(not reach, "libhost/*.[ch], libhost/tools/*.[ch] include nothing of emu/ or topologies/", "reach: %s" % reach)
    with open(os.path.join(ROOT, "README.md")) as f:
        named = set(re.findall(r"libcanaryhost\.so\.[0-9][0-9.]*[0-9]", f.read()))
    ok(named and named <= {SO, SOV}, "README.md names the library make install puts in place (%s, soname %s)" % (SOV, SO),
       "README.md names: %s" % sorted(named))
    rc, out = run(["nm", "-g", "--defined-only", os.path.join(lib, "libcanaryhost.a")])
    # (a sanitizer build adds its own markers, e.g. ASan's __odr_asan.<name>: not the library's names)
    foreign = sorted(set(s for s in re.findall(r" [TDBRW] (\S+)", out)
                         if not s.startswith("lh_") and not re.match(r"__(odr_asan|asan|ubsan|tsan|sancov)", s)))
    ok(rc == 0 and "lh_host_create" in out and not foreign, "libcanaryhost.a defines only lh_ symbols",
       "not lh_: %s" % foreign)
    tmp = tempfile.mkdtemp(prefix="canary-install-")
    try:
        # 1. staged install: DESTDIR + PREFIX
        stage = os.path.join(tmp, "stage")
        prefix = "/opt/canary"
        rc, out = run(["make", "--no-print-directory", "-s", "install", "DESTDIR=" + stage, "PREFIX=" + prefix])
        root = stage + prefix
        want = ["bin/canary-emu", "bin/canary-allreduce", "share/man/man1/canary-allreduce.1", "include/canary_host.h", "lib/libcanaryhost.a", "lib/libcanaryhost.so",
                "lib/" + SO, "lib/" + SOV, "lib/pkgconfig/canaryhost.pc",
                "share/man/man1/canary-emu.1", "share/man/man3/libcanaryhost.3",
                "share/canary/wireshark/canary.lua", "share/canary/examples/loopback.c",
                "share/canary/topologies/two-leaf.topo"]
        have = files_under(root) if os.path.isdir(root) else []
        ok(rc == 0 and all(w in have for w in want), "make install DESTDIR= PREFIX=: tool, header, .a, .so + links, .pc, man pages, "
           "share/canary/ (dissector, example, topology files)",
           out + "\nhave: %s" % have)
        ok(os.path.islink(root + "/lib/" + SO) and
           os.readlink(root + "/lib/" + SO) == SOV and
           os.readlink(root + "/lib/libcanaryhost.so") == SO, "soname links: .so -> %s -> %s" % (SO, SOV))
        rc, out = run(["readelf", "-d", root + "/lib/" + SOV])
        ok(rc == 0 and "Library soname: [%s]" % SO in out and
           not re.search(r"NEEDED.*\[lib(urcu|zmq|hwloc|pcap)", out), "soname %s, needs no emulator library" % SO,
           out)
        rc, out = run(["nm", "-D", "--defined-only", root + "/lib/" + SOV])
        syms = set(re.findall(r" [TD] (\w+)@", out))
        with open(os.path.join(ROOT, "libhost", "canary_host.h")) as f:
            declared = set(re.findall(r"\b(lh_\w+)\(", f.read()))
        ok(rc == 0 and syms and syms == declared,
           "the .so exports exactly the functions of canary_host.h (%d)" % len(syms),
           "not declared: %s\nnot exported (libhost/libcanaryhost.map): %s" % (syms - declared, declared - syms))
        if config().get("MPI_LIBS"):
            rc, out = run(["nm", "-D", "--defined-only", root + "/lib/libcanarympi.so"])
            syms = set(re.findall(r" T (\w+)", out))
            ok(rc == 0 and os.path.exists(root + "/share/man/man7/libcanarympi.7") and
               syms == {"MPI_Init", "MPI_Init_thread", "MPI_Allreduce", "MPI_Finalize"},
               "libcanarympi.so and libcanarympi(7) installed; it exports the four MPI functions it interposes",
               out)
        else:
            skip("no MPI found by ./configure: libcanarympi.so is not built")
        with open(root + "/lib/pkgconfig/canaryhost.pc") as f:
            pc = f.read()
        ok("prefix=/opt/canary" in pc and "libdir=/opt/canary/lib" in pc and "Version: %s" % VER in pc,
           "canaryhost.pc names the install directories, not the stage", pc)

        # 2. a program built from the installed files only, through pkg-config
        env = {"PKG_CONFIG_SYSROOT_DIR": stage, "PKG_CONFIG_LIBDIR": root + "/lib/pkgconfig", "PKG_CONFIG_PATH": ""}
        rc, flags = run(["pkg-config", "--cflags", "--libs", "canaryhost"], env=env)
        src = os.path.join(tmp, "loopback.c")
        shutil.copy(os.path.join(ROOT, "libhost", "examples", "loopback.c"), src)	# outside the tree
        exe = os.path.join(tmp, "loopback")
        rc2, out = run(cc + ["-std=c11", "-Wall", "-Wextra", "-Werror"] + san_c + ["-o", exe, src] + flags.split() + san_ld,
                       cwd=tmp)
        ok(rc == 0 and rc2 == 0, "cc loopback.c $(pkg-config --cflags --libs canaryhost) builds", flags + out)
        rc, out = run([exe, "5", "20000"], env={"LD_LIBRARY_PATH": root + "/lib"}, cwd=tmp)
        ok(rc == 0 and "exact on every host" in out, "it runs against the installed .so: exact on 5 hosts", out)
        rc, out = run(["ldd", exe], env={"LD_LIBRARY_PATH": root + "/lib"})
        ok(root + "/lib/" + SO in out, "...and loads the installed " + SO, out)
        exe_s = exe + "-static"
        rc, out = run(cc + ["-std=c11"] + san_c + ["-o", exe_s, src, "-I" + root + "/include", root + "/lib/libcanaryhost.a"] +
                      san_ld, cwd=tmp)
        rc2, out2 = run([exe_s, "3", "999"], cwd=tmp) if rc == 0 else (1, "")
        ok(rc == 0 and rc2 == 0 and "exact on every host" in out2, "linked with the installed libcanaryhost.a: exact",
           out + out2)

        # 3. make uninstall with the same variables removes every file and the directories install made
        rc, out = run(["make", "--no-print-directory", "-s", "uninstall", "DESTDIR=" + stage, "PREFIX=" + prefix])
        left = files_under(stage) + dirs_under(stage)
        ok(rc == 0 and left == [], "make uninstall DESTDIR= PREFIX=: no file and no directory left",
           out + "\nleft: %s" % left)

        # 4. PREFIX without DESTDIR, LIBDIR and INCLUDEDIR elsewhere (as configure --libdir/--includedir write them)
        p2 = os.path.join(tmp, "prefix")
        var = ["PREFIX=" + p2, "LIBDIR=" + p2 + "/lib64", "INCLUDEDIR=" + p2 + "/include/canary"]
        rc, out = run(["make", "--no-print-directory", "-s", "install"] + var)
        have = files_under(p2) if os.path.isdir(p2) else []
        ok(rc == 0 and "lib64/" + SOV in have and "include/canary/canary_host.h" in have and
           "lib64/pkgconfig/canaryhost.pc" in have, "make install PREFIX= LIBDIR= INCLUDEDIR= puts them there",
           out + "\nhave: %s" % have)
        env = {"PKG_CONFIG_PATH": p2 + "/lib64/pkgconfig", "PKG_CONFIG_LIBDIR": ""}
        rc, flags = run(["pkg-config", "--cflags", "--libs", "canaryhost"], env=env)
        rc2, out = run(cc + ["-std=c11"] + san_c + ["-o", exe, src] + flags.split() + san_ld, cwd=tmp)
        rc3, out3 = run([exe], env={"LD_LIBRARY_PATH": p2 + "/lib64"}, cwd=tmp) if rc2 == 0 else (1, "")
        ok(rc == 0 and "-I%s/include/canary" % p2 in flags and rc2 == 0 and rc3 == 0 and "exact" in out3,
           "pkg-config finds them; the program builds and runs", flags + out + out3)
        os.makedirs(p2 + "/share/mine")	# a directory install did not make stays, with its parents
        rc, out = run(["make", "--no-print-directory", "-s", "uninstall"] + var)
        left = files_under(p2) + dirs_under(p2)
        ok(rc == 0 and left == ["share", "share/mine"],
           "make uninstall with the same variables: no file left, nor a directory install made",
           out + "\nleft: %s" % left)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return exit_status(PLAN)


if __name__ == "__main__":
    sys.exit(main())
