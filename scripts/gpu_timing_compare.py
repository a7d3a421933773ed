#!/usr/bin/env python3
"""The same y = 3*x kernel (the shipped myop_cuda_naive plugin, loaded through its C ABI) timed
by Nsight Compute and by triton.testing.do_bench, and the table that sets backendbench's
figures beside theirs. Used by scripts/bench_gpu_timing.sh.

  driver --plugin P --sizes N,... --mode ncu      launches for ncu to profile (5 per size)
  driver --plugin P --sizes N,... --mode dobench  do_bench's mean and median, as JSON
  table --ours results.json[,label=...[,field=min_s]] --ncu ncu.csv --dobench dobench.json
        (the first --ours is the one held to the targets)
"""
import argparse
import csv
import ctypes as C
import json
import statistics
import sys


class DLDevice(C.Structure):
    _fields_ = [("device_type", C.c_int32), ("device_id", C.c_int32)]


class DLDataType(C.Structure):
    _fields_ = [("code", C.c_uint8), ("bits", C.c_uint8), ("lanes", C.c_uint16)]


class DLTensor(C.Structure):
    _fields_ = [("data", C.c_void_p), ("device", DLDevice), ("ndim", C.c_int32), ("dtype", DLDataType),
                ("shape", C.POINTER(C.c_int64)), ("strides", C.POINTER(C.c_int64)), ("byte_offset", C.c_uint64)]


class BBAttr(C.Structure):
    _fields_ = [("name", C.c_char_p), ("kind", C.c_int32), ("reserved", C.c_int32), ("i", C.c_int64), ("f", C.c_double),
                ("s", C.c_char_p), ("ints", C.POINTER(C.c_int64)), ("floats", C.POINTER(C.c_double)), ("count", C.c_int64)]


class BBCall(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("abi_version", C.c_uint32), ("op", C.c_char_p),
                ("num_inputs", C.c_int32), ("inputs", C.POINTER(DLTensor)), ("input_names", C.POINTER(C.c_char_p)),
                ("num_outputs", C.c_int32), ("outputs", C.POINTER(DLTensor)), ("output_names", C.POINTER(C.c_char_p)),
                ("num_attrs", C.c_int32), ("attrs", C.POINTER(BBAttr)), ("stream", C.c_void_p),
                ("error", C.c_void_p), ("error_capacity", C.c_size_t)]


def make_call(lib, x, y, alpha, stream):
    """A bb_call for myop(x) -> y, kept alive by the returned tuple."""
    shape = (C.c_int64 * 1)(x.numel())
    f32 = DLDataType(2, 32, 1)  # kDLFloat
    dev = DLDevice(2, x.device.index or 0)  # kDLCUDA
    ins = (DLTensor * 1)(DLTensor(x.data_ptr(), dev, 1, f32, shape, None, 0))
    outs = (DLTensor * 1)(DLTensor(y.data_ptr(), dev, 1, f32, shape, None, 0))
    in_names = (C.c_char_p * 1)(b"x")
    out_names = (C.c_char_p * 1)(b"y")
    attrs = (BBAttr * 1)(BBAttr(b"alpha", 1, 0, 0, alpha, None, None, None, 0))
    err = C.create_string_buffer(1024)
    call = BBCall(C.sizeof(BBCall), (1 << 16) | 0, b"myop", 1, ins, in_names, 1, outs, out_names, 1, attrs, stream,
                  C.cast(err, C.c_void_p), len(err))
    fn = lib.myop_kernel_impl
    fn.argtypes = [C.POINTER(BBCall)]
    fn.restype = C.c_int

    def run():
        rc = fn(C.byref(call))
        if rc != 0:
            raise RuntimeError(f"myop_kernel_impl returned {rc}: {err.value.decode()}")

    return run, (shape, ins, outs, in_names, out_names, attrs, err, call)


def driver(args):
    import torch
    lib = C.CDLL(args.plugin)
    stream = torch.cuda.current_stream().cuda_stream
    results = {}
    for n in [int(s) for s in args.sizes.split(",")]:
        x = torch.randn(n, device="cuda", dtype=torch.float32)
        y = torch.empty_like(x)
        run, keep = make_call(lib, x, y, 3.0, stream)
        run()
        torch.cuda.synchronize()
        assert torch.allclose(y, 3 * x), "the kernel is wrong"
        if args.mode == "ncu":
            for _ in range(args.launches):
                run()
            torch.cuda.synchronize()
        else:
            import triton.testing
            mean = triton.testing.do_bench(run, return_mode="mean")
            median = triton.testing.do_bench(run, return_mode="median")
            results[n] = {"mean_ms": mean, "median_ms": median}
        del keep, x, y
    if args.mode == "dobench":
        json.dump(results, sys.stdout)


def read_ncu(path):
    """Kernel durations in microseconds per element count (grid.x * 256 threads)."""
    per_size = {}
    with open(path, newline="") as f:
        lines = [l for l in f if l.startswith('"')]
    for row in csv.DictReader(lines):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        grid = row["Grid Size"].strip("()").split(",")
        n = int(grid[0]) * int(row["Block Size"].strip("()").split(",")[0])
        unit = row["Metric Unit"]
        v = float(row["Metric Value"].replace(",", ""))
        scale = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}[unit]
        per_size.setdefault(n, []).append(v * scale)
    return per_size


def read_ours(path):
    with open(path) as f:
        doc = json.load(f)
    out = {}
    for r in doc["tests"]:
        if r.get("kind") != "performance" or r.get("verdict") != "PASS" or "timing" not in r:
            continue
        n = int(r["case"].split("n=")[1].rstrip("]"))
        out[n] = r["timing"]
    return out


def fmt_us(v):
    return f"{v:.1f} µs" if v >= 10 else f"{v:.2f} µs"


def table(args):
    ncu = read_ncu(args.ncu)
    with open(args.dobench) as f:
        dob = {int(k): v for k, v in json.load(f).items()}
    ours = []
    for spec in args.ours:
        path, _, rest = spec.partition(",label=")
        label, _, field = rest.partition(",field=")
        ours.append((label or "backendbench", field or "median_s", read_ours(path)))
    names = {65536: "64K", 1048576: "1M", 16777216: "16M", 134217728: "128M"}
    head = ["elements", "ncu (median of 5)"]
    for label, _, _ in ours:
        head += [label, "error"]
    head += ["do_bench mean", "error", "do_bench median", "error"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    verdicts = []
    for n in sorted(ncu):
        ref = statistics.median(ncu[n])
        row = [names.get(n, str(n)), fmt_us(ref)]
        for label, field, o in ours:
            t = o.get(n)
            if t is None or not t.get(field):
                row += ["-", "-"]
                continue
            v = t[field] * 1e6
            row += [fmt_us(v), f"{(v / ref - 1) * 100:+.1f}%"]
        d = dob.get(n, {})
        for key in ("mean_ms", "median_ms"):
            if key in d:
                v = d[key] * 1e3
                row += [fmt_us(v), f"{(v / ref - 1) * 100:+.1f}%"]
            else:
                row += ["-", "-"]
        print("| " + " | ".join(row) + " |")
        first = ours[0][2].get(n)
        if first and first.get(ours[0][1]) and "mean_ms" in d:
            ours_err = abs(first[ours[0][1]] * 1e6 / ref - 1)
            db_err = abs(d["mean_ms"] * 1e3 / ref - 1)
            target = {1048576: 0.10, 16777216: 0.03, 134217728: 0.01}.get(n)
            ok = ours_err < db_err and (target is None or ours_err <= target)
            verdicts.append(f"{names.get(n, n)}: {ours_err * 100:.1f}% off ncu (target {'closer than do_bench' if target is None else f'<= {target * 100:g}% and closer than do_bench'}; do_bench {db_err * 100:.1f}%): {'met' if ok else 'MISSED'}")
    print()
    for v in verdicts:
        print("- " + v)
    costs = sorted({(t.get("event_cost_s"), t.get("samples_per_sync"), t.get("eviction")) for t in ours[0][2].values() if t.get("event_cost_s")})
    for cost, k, ev in costs:
        print(f"- events' own cost, calibrated in this run: {cost * 1e6:.2f} µs ({k} samples per synchronisation, eviction: {ev})")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("driver")
    d.add_argument("--plugin", required=True)
    d.add_argument("--sizes", default="65536,1048576,16777216,134217728")
    d.add_argument("--mode", choices=["ncu", "dobench"], required=True)
    d.add_argument("--launches", type=int, default=5)
    t = sub.add_parser("table")
    t.add_argument("--ours", action="append", required=True)
    t.add_argument("--ncu", required=True)
    t.add_argument("--dobench", required=True)
    args = p.parse_args()
    driver(args) if args.cmd == "driver" else table(args)


if __name__ == "__main__":
    main()
