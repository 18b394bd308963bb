#!/usr/bin/env python3
# check_deps.py - checks the dynamic dependencies of a shared library or program against an allow-list.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: check_deps.py FILE ALLOWED...

Prints the file's own dependencies (its DT_NEEDED entries, in order) and
every library the dynamic loader opens for it (ldd's closure, sorted), then
fails when:
  - a dependency, direct or indirect, is not one of ALLOWED (sonames such as
    libc.so.6; the loader itself and the vDSO are always allowed);
  - the loader cannot find a dependency;
  - a symbol stays undefined after loading (`ldd -r`), which means the file
    relies on the process having loaded some library it does not name.
"""
import re
import subprocess
import sys

ALWAYS = {"linux-vdso.so.1", "ld-linux-x86-64.so.2"}


def needed(path):
    out = subprocess.run(["readelf", "-d", "-W", path], check=True,
                         capture_output=True, text=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def closure(path):
    out = subprocess.run(["ldd", "-r", path], capture_output=True,
                         text=True)
    names, missing, undefined = set(), [], []
    for line in (out.stdout + out.stderr).splitlines():
        line = line.strip()
        if line.startswith("undefined symbol:"):
            undefined.append(line.split()[2])
        elif "=> not found" in line:
            missing.append(line.split()[0])
        elif line:
            name = line.split()[0]
            names.add(name.rsplit("/", 1)[-1])
    return names, missing, undefined


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    path, allowed = sys.argv[1], set(sys.argv[2:]) | ALWAYS
    direct = needed(path)
    names, missing, undefined = closure(path)
    print("needed: " + " ".join(direct))
    print("loads: " + " ".join(sorted(names - ALWAYS)))
    errors = []
    for name in sorted(set(direct) | names):
        if name not in allowed:
            errors.append("depends on " + name + ", which is not allowed")
    for name in missing:
        errors.append("the loader cannot find " + name)
    for symbol in undefined:
        errors.append("undefined symbol " + symbol)
    for error in errors:
        print("error: " + error)
    if errors:
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
