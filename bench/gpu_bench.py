#!/usr/bin/env python3
# gpu_bench.py - the GPU check's body: Tessera's CUDA artifacts checked and timed, and the same ops in PyTorch, in one run.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Runs on the GPU machine from a bundle that scripts/gpu-bundle.sh built
(no MLIR, no build tools: the bundle's tessera-gpu-run and
libtessera_runtime.so run the artifacts):

  gpu_bench.py --bundle DIR [--json FILE] [--deadline SECONDS]
               [--gpu-driver cuda|emulator] [--device N] [--only REGEX]
               [--skip-torch] [--torch-device cuda|cpu]

1. every reference model (DIR/models/*) and checked benchmark model
   (DIR/bench/* with test data) against its expected outputs (fp32: max
   |error| / max |expected| <= 1e-4), timed on its first test set;
2. PyTorch on the same operations (DIR/bench/benchmarks.json): the op on
   device tensors timed with CUDA events (torch.matmul -> cuBLAS, fp32
   without tf32; scaled_dot_product_attention, the backend it took
   recorded), and the whole round trip that a Tessera run times (pageable
   host inputs copied in, the op, the output copied back); plus
   PyTorch-only rows for what the bundle has no Tessera artifact of yet
   (fp8 e4m3 torch._scaled_mm 8192^3: ONNX 1.12 has no fp8 inputs);
3. the benchmark artifacts on pseudo-random inputs (tessera-gpu-run
   --random), each a whole tessera_model_run: inputs copied from the host,
   kernels, outputs copied back (the C API has no device tensors yet).

Prints one table and writes FILE (JSON, rewritten after every row, so a run
cut short keeps what it measured). Each step runs under a timeout and the
whole run stops starting new steps past --deadline seconds (default 330).
Exit status 1 when a checked output failed or a check could not run.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

START = time.monotonic()


def elapsed():
    return time.monotonic() - START


class Report:
    def __init__(self, path, meta):
        self.path, self.meta, self.rows = path, meta, []

    def add(self, row):
        self.rows.append(row)
        self.write()

    def write(self):
        if not self.path:
            return
        with open(self.path + ".tmp", "w") as f:
            json.dump({**self.meta, "elapsed_s": round(elapsed(), 1),
                       "rows": self.rows}, f, indent=1)
        os.replace(self.path + ".tmp", self.path)


def run_artifact(args, so, extra, timeout):
    """Runs tessera-gpu-run; returns its JSON (None on a crash or a
    timeout) and its output."""
    bundle = args.bundle
    out_json = so + ".result.json" if os.access(os.path.dirname(so), os.W_OK) \
        else os.path.join("/tmp", os.path.basename(so) + ".result.json")
    if os.path.exists(out_json):
        os.remove(out_json)
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = os.path.join(bundle, "lib") + (
        ":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    cmd = [os.path.join(bundle, "bin", "tessera-gpu-run"), so,
           f"gpu-driver={args.gpu_driver}", f"device={args.device}",
           f"--json={out_json}"] + extra
    try:
        proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True,
                              timeout=timeout, start_new_session=True)
        text = proc.stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout or ""
        text = (out if isinstance(out, str) else out.decode(errors="replace")
                ) + f"\n(timed out after {timeout:.0f} s)"
        return None, text
    result = None
    if os.path.exists(out_json):
        with open(out_json) as f:
            result = json.load(f)
    return result, text


def check_models(args, report, folders):
    failures = 0
    for kind, folder in folders:
        name = os.path.basename(folder)
        if args.only and not re.search(args.only, name):
            continue
        so = os.path.join(folder, "model.so")
        left = args.deadline - elapsed()
        if left < 10:
            report.add({"name": name, "kind": kind, "status": "skipped",
                        "why": "deadline"})
            failures += 1
            continue
        result, text = run_artifact(
            args, so, [f"--test-dir={folder}", "--max-error-ratio=1e-4",
                       "--warmup=1", f"--iters={args.check_iters}",
                       "--budget=3"], min(args.step_timeout, left - 5))
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        row = {"name": name, "kind": kind}
        if result is None:
            row.update(status="error", why=text.strip().splitlines()[-1:])
        else:
            ratios = [o["error_ratio"] for o in result["outputs"]]
            row.update(status="ok" if result["ok"] else "FAIL",
                       outputs=len(result["outputs"]),
                       max_error_ratio=max(
                           [r for r in ratios if r is not None],
                           default=None),
                       tessera_ms=result.get("median_ms"),
                       tessera_device_ms=result.get("device_median_ms"),
                       tessera_runs=result.get("runs"),
                       errors=result["errors"])
        failures += row["status"] != "ok"
        report.add(row)
    return failures


def torch_rows(args, report, specs):
    """Times each benchmark op in PyTorch; returns {name: row}."""
    import torch
    import torch.nn.functional as F

    dev = args.torch_device
    if dev == "cuda" and not torch.cuda.is_available():
        raise SystemExit("error: PyTorch sees no CUDA device")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    report.meta["torch"] = torch.__version__
    if dev == "cuda":
        report.meta["gpu"] = torch.cuda.get_device_name(0)
        report.meta["torch_cuda"] = torch.version.cuda
    dtypes = {"float32": torch.float32, "bfloat16": torch.bfloat16}

    def sync():
        if dev == "cuda":
            torch.cuda.synchronize()

    def device_ms(fn, iters=10, warmup=3):
        for _ in range(warmup):
            fn()
        sync()
        times = []
        for _ in range(iters):
            if dev == "cuda":
                a, b = (torch.cuda.Event(enable_timing=True) for _ in "ab")
                a.record()
                fn()
                b.record()
                b.synchronize()
                times.append(a.elapsed_time(b))
            else:
                t = time.perf_counter()
                fn()
                times.append(1e3 * (time.perf_counter() - t))
        times.sort()
        return times[len(times) // 2]

    def round_trip_ms(host_inputs, op, iters=5):
        def once():
            y = op(*[x.to(dev) for x in host_inputs])
            return y.cpu()
        once()
        times = []
        for _ in range(iters):
            t = time.perf_counter()
            once()
            times.append(1e3 * (time.perf_counter() - t))
        times.sort()
        return times[len(times) // 2]

    def sdpa(causal, q):
        """The SDPA call and the backend it ran on (flash first)."""
        try:
            from torch.nn.attention import SDPBackend, sdpa_kernel
        except ImportError:  # PyTorch before 2.3: its own choice
            return (lambda q, k, v: F.scaled_dot_product_attention(
                q, k, v, is_causal=causal)), "default"
        for backend in (SDPBackend.FLASH_ATTENTION,
                        SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH):
            def fn(q, k, v, backend=backend):
                with sdpa_kernel([backend]):
                    return F.scaled_dot_product_attention(q, k, v,
                                                          is_causal=causal)
            try:
                fn(q, q, q)
                return fn, backend.name.lower()
            except RuntimeError:
                continue
        raise RuntimeError("no SDPA backend ran")

    rows = {}
    gen = torch.Generator(device="cpu").manual_seed(0)
    for s in specs:
        if args.only and not re.search(args.only, s["name"]):
            continue
        if args.deadline - elapsed() < 30:
            break
        dt = dtypes[s["dtype"]]
        row = {"op": s["op"]}
        try:
            if s["op"] == "gemm":
                host = [torch.randn(s["m"], s["k"], generator=gen).to(dt),
                        torch.randn(s["k"], s["n"], generator=gen).to(dt)]
                a, b = (x.to(dev) for x in host)
                row["torch_op"] = "torch.matmul"
                row["torch_device_ms"] = device_ms(lambda: torch.matmul(a, b))
                row["torch_round_trip_ms"] = round_trip_ms(host, torch.matmul)
            else:
                shape = (s["batch"], s["heads"], s["seq"], s["dim"])
                host = [torch.randn(*shape, generator=gen).to(dt)
                        for _ in range(3)]
                q, k, v = (x.to(dev) for x in host)
                fn, backend = sdpa(s["causal"], q)
                row["torch_op"] = f"scaled_dot_product_attention ({backend})"
                row["torch_device_ms"] = device_ms(lambda: fn(q, k, v))
                row["torch_round_trip_ms"] = round_trip_ms(host, fn)
            del host
        except Exception as e:  # report, keep going
            row["torch_error"] = str(e).splitlines()[0][:200]
        rows[s["name"]] = row
        if dev == "cuda":
            torch.cuda.empty_cache()

    # PyTorch-only reference rows: what Tessera does not compile yet.
    if dev == "cuda" and not args.only and args.deadline - elapsed() > 40:
        n = 8192
        try:
            a = torch.randn(n, n, device=dev).to(torch.float8_e4m3fn)
            b = torch.randn(n, n, device=dev).to(torch.float8_e4m3fn).t()
            one = torch.ones((), device=dev)
            ms = device_ms(lambda: torch._scaled_mm(
                a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16))
            rows["torch_only_fp8_e4m3_gemm_8192"] = {
                "op": "gemm", "torch_op": "torch._scaled_mm (fp8 e4m3)",
                "torch_device_ms": ms, "flops": 2.0 * n ** 3}
            del a, b
        except Exception as e:
            rows["torch_only_fp8_e4m3_gemm_8192"] = {
                "op": "gemm", "torch_error": str(e).splitlines()[0][:200]}
        torch.cuda.empty_cache()
    return rows


def tflops(flops, ms):
    return flops / (ms * 1e-3) / 1e12 if ms else None


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bundle", required=True)
    p.add_argument("--json")
    p.add_argument("--deadline", type=float, default=330)
    p.add_argument("--step-timeout", type=float, default=60)
    p.add_argument("--gpu-driver", default="cuda")
    p.add_argument("--device", default="0")
    p.add_argument("--only", help="run only the models whose name matches")
    p.add_argument("--skip-torch", action="store_true")
    p.add_argument("--skip-timed", action="store_true",
                   help="no random-input benchmark runs")
    p.add_argument("--torch-device", default="cuda")
    p.add_argument("--check-iters", type=int, default=10)
    p.add_argument("--bench-iters", type=int, default=10)
    p.add_argument("--bench-budget", type=float, default=8)
    args = p.parse_args()
    args.bundle = os.path.abspath(args.bundle)
    with open(os.path.join(args.bundle, "bench", "benchmarks.json")) as f:
        specs = json.load(f)
    meta = {"what": "Tessera CUDA artifacts vs PyTorch (bench/gpu_bench.py)",
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            "gpu_driver": args.gpu_driver, "device": args.device}
    manifest = os.path.join(args.bundle, "MANIFEST")
    if os.path.exists(manifest):
        with open(manifest) as f:
            meta["bundle"] = f.read().strip().splitlines()
    report = Report(args.json, meta)

    print("== 1. reference models and checked benchmark models "
          "(max error ratio 1e-4)")
    folders = [("reference", os.path.join(args.bundle, "models", d))
               for d in sorted(os.listdir(os.path.join(args.bundle,
                                                       "models")))]
    folders += [("bench-checked", os.path.join(args.bundle, "bench",
                                               s["name"]))
                for s in specs if s["checked"]]
    failures = check_models(args, report, folders)

    torch = {}
    if not args.skip_torch:
        print("== 2. PyTorch on the same operations")
        torch = torch_rows(args, report, specs)

    print("== 3. benchmark artifacts (whole runs, pseudo-random inputs)")
    for s in specs:
        if args.only and not re.search(args.only, s["name"]):
            continue
        row = {"name": s["name"], "kind": "bench", "flops": s["flops"],
               **torch.get(s["name"], {})}
        left = args.deadline - elapsed()
        if args.skip_timed or s["checked"]:
            # Checked models were timed on their test data in step 1.
            prior = next((r for r in report.rows if r["name"] == s["name"]),
                         {})
            row["tessera_ms"] = prior.get("tessera_ms")
            row["tessera_device_ms"] = prior.get("tessera_device_ms")
            row["status"] = prior.get("status", "not run")
        elif left < 15:
            row["status"] = "skipped (deadline)"
        else:
            result, text = run_artifact(
                args, os.path.join(args.bundle, "bench", s["name"],
                                   "model.so"),
                ["--random", "--warmup=1", f"--iters={args.bench_iters}",
                 f"--budget={args.bench_budget}"],
                min(args.step_timeout, left - 10))
            sys.stdout.write(text if text.endswith("\n") else text + "\n")
            if result is None or result["errors"]:
                row["status"] = "error"
                row["why"] = text.strip().splitlines()[-1:]
            else:
                row["status"] = "timed"
                row["tessera_ms"] = result.get("median_ms")
                row["tessera_device_ms"] = result.get("device_median_ms")
                row["tessera_runs"] = result.get("runs")
        report.add(row)
    for name, row in torch.items():
        if name.startswith("torch_only"):
            report.add({"name": name, "kind": "torch-only", **row})

    # One table.
    print("\n== Tessera CUDA artifacts and PyTorch, one run "
          f"({report.meta.get('gpu', args.gpu_driver)}, "
          f"torch {report.meta.get('torch', '-')})")
    print("Tessera ms: median whole tessera_model_run (host copies in and "
          "out); T dev: its kernels alone (CUDA events); torch rt: the same "
          "round trip in PyTorch; torch dev: the op alone (CUDA events); "
          "ratio: torch rt / Tessera, dev ratio: torch dev / T dev "
          "(1 = parity)")
    head = (f"{'name':44} {'status':10} {'err ratio':>9} {'Tessera ms':>11} "
            f"{'T dev':>9} {'torch rt':>9} {'torch dev':>9} {'ratio':>6} "
            f"{'dev ratio':>9} {'TF/s T':>7} {'TF/s dev':>8}  torch op")
    print(head)
    print("-" * len(head))
    fmt = lambda x, f: (f % x) if isinstance(x, (int, float)) else "-"
    for r in report.rows:
        if r["kind"] == "bench-checked":
            continue  # listed again as a bench row
        t, rt, dev = (r.get("tessera_ms"), r.get("torch_round_trip_ms"),
                      r.get("torch_device_ms"))
        tdev = r.get("tessera_device_ms")
        flops = r.get("flops")
        ratio = rt / t if (t and rt) else None
        dev_ratio = dev / tdev if (tdev and dev) else None
        r["ratio_torch_round_trip_over_tessera"] = ratio
        r["ratio_torch_device_over_tessera_device"] = dev_ratio
        r["tessera_tflops"] = tflops(flops, t) if flops else None
        r["torch_device_tflops"] = tflops(flops, dev) if flops else None
        err = r.get("max_error_ratio")
        if err is None:
            prior = next((x for x in report.rows if x["name"] == r["name"]
                          and x["kind"] == "bench-checked"), {})
            err = prior.get("max_error_ratio")
        print(f"{r['name'][:44]:44} {r.get('status', '-')[:10]:10} "
              f"{fmt(err, '%9.2g'):>9} {fmt(t, '%11.3f'):>11} "
              f"{fmt(tdev, '%9.3f'):>9} "
              f"{fmt(rt, '%9.3f'):>9} {fmt(dev, '%9.3f'):>9} "
              f"{fmt(ratio, '%6.3f'):>6} {fmt(dev_ratio, '%9.3f'):>9} "
              f"{fmt(r['tessera_tflops'], '%7.2f'):>7} "
              f"{fmt(r['torch_device_tflops'], '%8.2f'):>8}  "
              + (f"error: {r['torch_error']}" if "torch_error" in r
                 else r.get("torch_op", "")))
    report.meta["failures"] = failures
    report.write()
    print(f"\n{failures} check failures; {elapsed():.0f} s"
          + (f"; JSON: {args.json}" if args.json else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
