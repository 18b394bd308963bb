# ptxas_resources.py - assembles a PTX file with `ptxas -v` for one
# architecture and checks every kernel's resources: no register spills, no
# stack frame, shared memory within the architecture's per-block limit.
# Prints one summary line; exits 1 (naming the kernel) when a check fails.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import os
import re
import subprocess
import sys
import tempfile

# Shared memory a block may use (opt-in maximum), in bytes.
LIMITS = {"sm_80": 163 * 1024, "sm_86": 99 * 1024, "sm_89": 99 * 1024,
          "sm_90": 227 * 1024, "sm_90a": 227 * 1024}


def assemble(ptxas, ptx, arch):
    """ptxas -v's report on `ptx`, one module at a time (--emit=ptx writes
    the sm_90a kernels' module after the others, each with its own
    .version)."""
    with open(ptx) as f:
        text = f.read()
    starts = [m.start() for m in re.finditer(r"^\.version", text, re.M)]
    modules = [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]
    report = []
    with tempfile.TemporaryDirectory() as folder:
        for i, module in enumerate(modules or [text]):
            path = os.path.join(folder, f"module{i}.ptx")
            with open(path, "w") as f:
                f.write(module)
            run = subprocess.run([ptxas, "-v", f"-arch={arch}", path, "-o",
                                  os.devnull], capture_output=True, text=True)
            if run.returncode != 0:
                sys.exit(f"ptxas failed: {run.stderr.strip()}")
            report.extend(run.stderr.splitlines())
    return report


def main():
    ptxas, ptx, arch = sys.argv[1:4]
    kernels, failures, max_smem, max_regs = 0, [], 0, 0
    kernel = None
    for line in assemble(ptxas, ptx, arch):
        m = re.search(r"Compiling entry function '(\w+)'", line)
        if m:
            kernel, kernels = m.group(1), kernels + 1
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, "
                      r"(\d+) bytes spill loads", line)
        if m and any(int(g) for g in m.groups()):
            failures.append(f"{kernel}: {line.strip()}")
        m = re.search(r"Used (\d+) registers", line)
        if m:
            max_regs = max(max_regs, int(m.group(1)))
        m = re.search(r"(\d+) bytes smem", line)
        if m:
            smem = int(m.group(1))
            max_smem = max(max_smem, smem)
            if smem > LIMITS.get(arch, 48 * 1024):
                failures.append(f"{kernel}: {smem} bytes of shared memory")
    print(f"{arch}: {kernels} kernels, at most {max_regs} registers and "
          f"{max_smem} bytes of shared memory, "
          f"{len(failures)} over their limits")
    for failure in failures:
        print(f"  {failure}")
    sys.exit(1 if failures or kernels == 0 else 0)


if __name__ == "__main__":
    main()
