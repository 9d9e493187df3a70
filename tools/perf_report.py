#!/usr/bin/env python3
"""qdml-bench JSON -> the performance report's tables and a plot.

Runs qdml-bench (or reads a JSON it wrote) with

    --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
    --benchmark_format=json

takes the `_median` aggregate of real_time for every row (BENCH.md), and
writes, from that one run:

- the tables between `<!-- perf-report:begin -->` and
  `<!-- perf-report:end -->` in docs/perf/results.md (--out): per row, the reference, the
  fastest qdml implementation, the fastest peer (with its mismatch count
  against qdml's reference), the ratio peer / qdml (above 1: qdml is
  faster), and both as a % of the machine's limit measured in the same run
  (element-wise: bytes_per_second / hw/stream/u8_f32; matmul and conv:
  OPS / the highest hw/dot peak), plus the CPU model and flags; with
  --isa, the matmul SIMD and oneDNN rows once more per QDML_ISA cap (oneDNN
  held to the same instructions by DNNL_MAX_CPU_ISA), each against the
  peak of its own dot-product instruction (for the avx2 cap the conv rows
  too: issue 9 states targets for AVX2-only CPUs);
- docs/perf/performance.png (matplotlib: Debian python3-matplotlib), shown
  by the report;
- docs/perf/qdml-bench.json, the benchmark's JSON (its medians and skipped
  rows), which `--json` reads back.

The single-thread targets of issues 7, 8 and 9, evaluated on the same run,
go to standard error, not into the report: the issue tracker keeps that
scoreboard.

    tools/perf_report.py --bench build/bench/qdml-bench [--filter REGEX] [--isa amx,avx2]
    tools/perf_report.py --json results.json        # no run: tables from a file
"""
import argparse
import json
import os
import re
import subprocess
import sys
from collections import OrderedDict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN, END = "<!-- perf-report:begin -->", "<!-- perf-report:end -->"
QDML_IMPLS = ("reference", "simd", "simd_prepared")
UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def run_bench(bench, bench_filter, isa=None):
    cmd = [bench, "--benchmark_repetitions=5", "--benchmark_report_aggregates_only=true",
           "--benchmark_format=json"]
    if bench_filter:
        cmd.append("--benchmark_filter=" + bench_filter)
    env = dict(os.environ)
    prefix = ""
    if isa:
        env["QDML_ISA"] = isa
        env["DNNL_MAX_CPU_ISA"] = DNNL_ISA.get(isa, "ALL")
        prefix = "QDML_ISA=%s DNNL_MAX_CPU_ISA=%s " % (isa, env["DNNL_MAX_CPU_ISA"])
    print("running:", prefix + " ".join(cmd), file=sys.stderr)
    load_before = os.getloadavg()[0]
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, env=env).stdout
    data = json.loads(out)
    # Other work on the machine shifts every figure: say how busy it was.
    data["qdml_load_average"] = "%.1f before, %.1f after" % (load_before, os.getloadavg()[0])
    return data, cmd


def medians(data):
    """{row name: median entry} (row name without /real_time), in run order;
    rows that were skipped map to their error message."""
    rows = OrderedDict()
    for b in data["benchmarks"]:
        name = b.get("run_name", b["name"])
        name = re.sub(r"/real_time$", "", name)
        if b.get("error_occurred"):
            rows.setdefault(name, b.get("error_message", "skipped"))
        elif b.get("run_type") == "aggregate" and b.get("aggregate_name") == "median":
            b = dict(b)
            b["ns"] = b["real_time"] * UNIT_NS[b.get("time_unit", "ns")]
            rows[name] = b
        elif b.get("run_type") == "iteration" and name not in rows:
            b = dict(b)  # a single run (repetitions=1): its own figure
            b["ns"] = b["real_time"] * UNIT_NS[b.get("time_unit", "ns")]
            rows[name] = b
    return rows


def fmt_time(ns):
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return "%.3g %s" % (ns / scale, unit)
    return "%.3g ns" % ns


def fmt_rate(v, unit):
    for prefix, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6)):
        if v >= scale:
            return "%.3g %s%s" % (v / scale, prefix, unit)
    return "%.3g %s" % (v, unit)


def limits(rows):
    """(stream bytes/s, (dot row, OPS) of the highest dot peak)."""
    stream = rows.get("hw/stream/u8_f32/16777216")
    stream_bps = stream["bytes_per_second"] if isinstance(stream, dict) else None
    dots = [(n, r["OPS"]) for n, r in rows.items() if n.startswith("hw/dot/") and isinstance(r, dict)]
    return stream_bps, max(dots, key=lambda d: d[1]) if dots else None


def groups(rows):
    """{(op, types, shape): {impl: entry}} for every non-hw row, in run order."""
    g = OrderedDict()
    for name, r in rows.items():
        parts = name.split("/")
        if parts[0] == "hw" or len(parts) != 4 or not isinstance(r, dict):
            continue
        op, impl, types, shape = parts
        # onednn NHWC and onednn_e2e NCHW rows mirror the qdml row of their own layout.
        g.setdefault((op, types, shape), OrderedDict())[impl] = r
    return g


def percent(rate, limit):
    return "%.1f%%" % (100.0 * rate / limit) if rate and limit else "-"


def table(rows):
    stream_bps, dot = limits(rows)
    lines = []
    lines.append("| row | reference | qdml (fastest) | reference / qdml | best peer | peer / qdml | qdml % of limit "
                 "| peer % of limit |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for (op, types, shape), impls in groups(rows).items():
        element_wise = op in ("dequantize_linear", "quantized_linear_add", "clip")
        counter = "bytes_per_second" if element_wise else "OPS"
        limit = stream_bps if element_wise else (dot[1] if dot else None)
        ours = [(i, r) for i, r in impls.items() if i in QDML_IMPLS]
        peers = [(i, r) for i, r in impls.items() if i not in QDML_IMPLS]
        ref = impls.get("reference")
        best = min(ours, key=lambda x: x[1]["ns"]) if ours else None
        peer = min(peers, key=lambda x: x[1]["ns"]) if peers else None
        cells = ["`%s/%s/%s`" % (op, types, shape), fmt_time(ref["ns"]) if ref else "-"]
        if best:
            mism = int(best[1].get("mismatches", 0))  # non-zero: a fast path that is not bit-identical
            cells.append("%s (%s%s)" % (fmt_time(best[1]["ns"]), best[0],
                                        ", %d DIFFER FROM THE REFERENCE" % mism if mism else ""))
        else:
            cells.append("-")
        cells.append("%.3gx" % (ref["ns"] / best[1]["ns"]) if ref and best else "-")
        if peer:
            mism = int(peer[1].get("mismatches", 0))
            cells.append("%s (%s%s)" % (fmt_time(peer[1]["ns"]), peer[0],
                                        ", %d differ" % mism if mism else ""))
        else:
            cells.append("-")
        cells.append("%.3gx" % (peer[1]["ns"] / best[1]["ns"]) if best and peer else "-")
        if element_wise and shape != "16777216":
            limit = None  # in cache: the DRAM streaming limit does not bound it
        cells.append(percent(best[1].get(counter) if best else None, limit))
        cells.append(percent(peer[1].get(counter) if peer else None, limit))
        lines.append("| " + " | ".join(cells) + " |")
    return lines, stream_bps, dot


def limits_table(rows):
    lines = ["| limit | median | figure |", "|---|---|---|"]
    for name, r in rows.items():
        if not name.startswith("hw/"):
            continue
        if not isinstance(r, dict):
            lines.append("| `%s` | skipped | %s |" % (name, r))
            continue
        fig = fmt_rate(r["bytes_per_second"], "B/s") if "bytes_per_second" in r else fmt_rate(r["OPS"], "OPS")
        label = (" (%s)" % r["label"]) if r.get("label") else ""
        lines.append("| `%s` | %s | %s%s |" % (name, fmt_time(r["ns"]), fig, label))
    return lines


# Each QDML_ISA path: the dot-product instruction that bounds it, and the
# DNNL_MAX_CPU_ISA that holds oneDNN to the same instructions.
ISA_PEAK = {"amx": "hw/dot/amx_tdpbusd/peak", "avx512vnni": "hw/dot/avx512vnni_vpdpbusd/peak",
            "avxvnni": "hw/dot/avxvnni_vpdpbusd/peak", "avx2": "hw/dot/avx2_vpmaddwd/peak"}
DNNL_ISA = {"amx": "AVX512_CORE_AMX", "avx512vnni": "AVX512_CORE_VNNI", "avxvnni": "AVX2_VNNI", "avx2": "AVX2",
            "generic": "SSE41"}
ISA_FILTER = "^matmul/(simd|simd_prepared|onednn)/"
# Issue 9's AVX2 targets (oneDNN end to end from NCHW, NHWC, % of the
# vpmaddwd peak) are read from the avx2 run, which adds the conv rows.
ISA_FILTER_CONV = "^(matmul/(simd|simd_prepared|onednn)|conv/(simd|simd_prepared|onednn|onednn_e2e|xnnpack))/"


def isa_filter(isa):
    return ISA_FILTER_CONV if isa == "avx2" else ISA_FILTER


def onednn_peer(r, op, types, shape):
    """oneDNN's row for a qdml row: the same name, or for an NCHW conv its
    end-to-end row (oneDNN computes NHWC and reorders on either side)."""
    for impl in ("onednn", "onednn_e2e"):
        e = r.get("/".join((op, impl, types, shape)))
        if e is not None:
            return e
    return None


def isa_table(data, rows):
    """Matmul rows once per QDML_ISA cap (oneDNN held to the same ISA):
    qdml's time and % of that path's dot peak, oneDNN's, and their ratio."""
    runs = data.get("qdml_isa_runs", {})
    if not runs:
        return []
    out = ["", "Matmul (and for `avx2` conv) per ISA path: each path in its own run (`QDML_ISA=<path>`, and "
           "oneDNN held to the same instructions by `DNNL_MAX_CPU_ISA`), filter `%s` (`avx2`: `%s`); %% of that "
           "path's `hw/dot` peak from the run above; an NCHW conv row's oneDNN is its end-to-end row."
           % (ISA_FILTER, ISA_FILTER_CONV), ""]
    out.append("| row | path | qdml | % of the path's peak | oneDNN, same ISA | oneDNN / qdml |")
    out.append("|---|---|---|---|---|---|")
    for isa, benchmarks in runs.items():
        r = medians({"benchmarks": benchmarks})
        peak = rows.get(ISA_PEAK.get(isa, ""))
        for name, e in r.items():
            op, impl, types, shape = name.split("/")
            if impl not in QDML_IMPLS or not isinstance(e, dict):
                continue
            peer = onednn_peer(r, op, types, shape)
            cells = ["`%s`" % name, "`%s`" % isa, fmt_time(e["ns"])]
            cells.append(percent(e.get("OPS"), peak["OPS"]) if isinstance(peak, dict) else "-")
            if isinstance(peer, dict):
                mism = int(peer.get("mismatches", 0))
                impl_info = peer.get("label", "").split(" mismatches=")[0].replace("onednn:", "")
                cells.append("%s (%s%s)" % (fmt_time(peer["ns"]), impl_info, ", %d differ" % mism if mism else ""))
                cells.append("%.3gx" % (peer["ns"] / e["ns"]))
            else:
                cells += [peer if isinstance(peer, str) else "-", "-"]
            out.append("| " + " | ".join(cells) + " |")
    return out


def fastest(entries, impls):
    cands = [(i, e) for i, e in entries.items() if i in impls and isinstance(e, dict)]
    return min(cands, key=lambda x: x[1]["ns"]) if cands else None


SIMD_IMPLS = ("simd", "simd_prepared")


def targets_table(data, rows):
    """The single-thread targets of issues 7 and 8, each evaluated on this
    run: the measured figure and whether it holds."""
    g = groups(rows)
    stream_bps, _ = limits(rows)
    isa_runs = {isa: medians({"benchmarks": b}) for isa, b in data.get("qdml_isa_runs", {}).items()}
    out = []

    def add(issue, target, measured, holds):
        out.append("| %s | %s | %s | %s |" % (issue, target, measured,
                                              "-" if holds is None else ("yes" if holds else "**no**")))

    def vs_peer(issue, op, types, shape, want, impls=("simd",), peers=None):
        e = g.get((op, types, shape), {})
        ours = fastest(e, impls)
        theirs = fastest(e, peers) if peers else fastest(e, [i for i in e if i not in QDML_IMPLS])
        text = "`%s/%s/%s`: %s >= %.2gx %s" % (op, types, shape, "/".join(impls),
                                                 want, "/".join(peers) if peers else "the best peer")
        if not ours or not theirs:
            add(issue, text, "not measured", None)
            return
        ratio = theirs[1]["ns"] / ours[1]["ns"]
        add(issue, text, "%.3gx (%s %s, %s %s)" % (ratio, ours[0], fmt_time(ours[1]["ns"]), theirs[0],
                                                   fmt_time(theirs[1]["ns"])), ratio >= want)

    for types in ("i8_f32", "u8_f32"):
        e = g.get(("dequantize_linear", types, "16777216"), {})
        ours = fastest(e, SIMD_IMPLS)
        text = "`dequantize_linear/%s/16777216`: simd >= 85%% of `hw/stream`" % types
        if ours and stream_bps:
            frac = ours[1]["bytes_per_second"] / stream_bps
            add("7", text, "%.1f%%" % (100 * frac), frac >= 0.85)
        else:
            add("7", text, "not measured", None)
        vs_peer("7", "dequantize_linear", types, "16777216", 1.1)
    for types in ("i8", "u8"):
        vs_peer("7", "quantized_linear_add", types, "16777216", 1.3)
        vs_peer("7", "quantized_linear_add", types, "65536", 1.0)
    vs_peer("7", "clip", "f32", "16777216", 1.2)
    vs_peer("7", "clip", "f32", "65536", 1.0)
    worst = None
    for (op, types, shape), e in g.items():
        if op in ("dequantize_linear", "quantized_linear_add", "clip") and shape.startswith("65536") \
                and "simd" in e and "reference" in e:
            r = e["reference"]["ns"] / e["simd"]["ns"]
            if worst is None or r < worst[0]:
                worst = (r, "%s/%s/%s" % (op, types, shape))
    add("7", "every element-wise simd row >= 4x its reference at 65536 (packed, bcast, strided)",
        "worst %.3gx (`%s`)" % worst if worst else "not measured", worst[0] >= 4 if worst else None)

    flags = data.get("context", {}).get("qdml_cpu_flags", "")
    if any(f in flags.split() for f in ("avx512vnni", "avxvnni", "amx-int8")):
        vs_peer("8", "matmul", "u8s8u8", "1024x1024x1024", 1.2, ("simd_prepared",), ("onednn",))
        vs_peer("8", "matmul", "u8s8u8", "256x256x256", 1.0, ("simd",), ("onednn",))
        vnni = isa_runs.get("avx512vnni", {}).get("matmul/simd_prepared/u8s8u8/1024x1024x1024")
        peak = rows.get(ISA_PEAK["avx512vnni"])
        text = "`QDML_ISA=avx512vnni`: 1024^3 u8s8u8 simd_prepared >= 90% of `avx512vnni_vpdpbusd` peak"
        if isinstance(vnni, dict) and isinstance(peak, dict):
            frac = vnni["OPS"] / peak["OPS"]
            add("8", text, "%.1f%%" % (100 * frac), frac >= 0.9)
        else:
            add("8", text, "not measured", None)
    vs_peer("8", "matmul", "u8s8u8", "1x4096x4096", 1.1, ("simd_prepared",))
    vs_peer("8", "matmul", "u8s8u8", "64x64x64x64", 1.2, ("simd_prepared",), ("onednn",))
    avx2 = isa_runs.get("avx2", {})
    peak = rows.get(ISA_PEAK["avx2"])
    for name, want, what in (("matmul/simd_prepared/u8s8u8/1024x1024x1024", 0.85, "oneDNN"),
                             ("matmul/simd_prepared/u8s8u8/1024x1024x1024", 0.75, "peak"),
                             ("matmul/simd/u8s8u8/256x256x256", 0.85, "oneDNN")):
        ours = avx2.get(name)
        if what == "peak":
            text = "`QDML_ISA=avx2`: `%s` >= 75%% of `avx2_vpmaddwd` peak" % name
            ok = isinstance(ours, dict) and isinstance(peak, dict)
            add("8", text, "%.1f%%" % (100 * ours["OPS"] / peak["OPS"]) if ok else "not measured",
                ours["OPS"] / peak["OPS"] >= want if ok else None)
            continue
        theirs = avx2.get(name.replace("/simd_prepared/", "/onednn/").replace("/simd/", "/onednn/"))
        text = "`QDML_ISA=avx2`: `%s` >= %.2gx oneDNN at `DNNL_MAX_CPU_ISA=AVX2`" % (name, want)
        ok = isinstance(ours, dict) and isinstance(theirs, dict)
        add("8", text, "%.3gx" % (theirs["ns"] / ours["ns"]) if ok else "not measured",
            theirs["ns"] / ours["ns"] >= want if ok else None)
    targets_9(g, rows, isa_runs, flags, add)
    return ["", "Targets of issues 7, 8 and 9 (single thread, medians of this run):", "",
            "| issue | target | measured | holds |", "|---|---|---|---|"] + out


def targets_9(g, rows, isa_runs, flags, add):
    """Issue 9 (convolution): qdml's fastest of simd / simd_prepared in each
    layout against oneDNN end to end from NCHW or oneDNN in NHWC; the
    depthwise shape against the best peer in either layout; the AVX2
    targets from the `QDML_ISA=avx2` run (oneDNN at `DNNL_MAX_CPU_ISA=AVX2`)."""
    def ratio_line(text, ours, theirs, want, names=("qdml", "oneDNN")):
        if isinstance(ours, dict) and isinstance(theirs, dict):
            r = theirs["ns"] / ours["ns"]
            add("9", text, "%.3gx (%s %s, %s %s)" % (r, names[0], fmt_time(ours["ns"]), names[1],
                                                     fmt_time(theirs["ns"])), r >= want)
        else:
            add("9", text, "not measured", None)

    def best(entries, impls):
        f = fastest(entries, impls)
        return f[1] if f else None

    if any(f in flags.split() for f in ("avx512vnni", "avxvnni", "amx-int8")):
        for shape in ("3x3_64_64_56", "1x1_256_64_56"):
            e = g.get(("conv", "u8s8u8", shape + "_nchw"), {})
            ratio_line("`conv/u8s8u8/%s_nchw`: qdml >= 1.5x oneDNN end to end" % shape,
                       best(e, SIMD_IMPLS), e.get("onednn_e2e"), 1.5)
            e = g.get(("conv", "u8s8u8", shape + "_nhwc"), {})
            ratio_line("`conv/u8s8u8/%s_nhwc`: qdml >= 1.0x oneDNN in NHWC" % shape,
                       best(e, SIMD_IMPLS), e.get("onednn"), 1.0)
    dw = "3x3_32_32_112_dw"

    def depthwise(by_layout, prefix, suffix):
        """The depthwise target: by_layout maps nchw / nhwc to {impl: entry}."""
        peers = {}
        for layout, entries in by_layout.items():
            for impl, entry in entries.items():
                if impl not in QDML_IMPLS and isinstance(entry, dict):
                    peers["%s %s" % (impl, layout)] = entry
        peer = min(peers.items(), key=lambda x: x[1]["ns"]) if peers else None
        for layout, entries in by_layout.items():
            ratio_line("%s`conv/u8s8u8/%s_%s`: qdml >= 2x the best peer in either layout%s" % (prefix, dw, layout, suffix),
                       best(entries, SIMD_IMPLS), peer[1] if peer else None, 2.0, ("qdml", peer[0] if peer else "-"))

    depthwise({layout: g.get(("conv", "u8s8u8", "%s_%s" % (dw, layout)), {}) for layout in ("nchw", "nhwc")}, "", "")
    avx2 = isa_runs.get("avx2", {})
    if not avx2:
        return
    # "Everywhere": the AVX2 path against oneDNN held to AVX2 (XNNPACK is not capped: a peer at least as fast).
    depthwise({layout: {impl: avx2.get("conv/%s/u8s8u8/%s_%s" % (impl, dw, layout))
                        for impl in SIMD_IMPLS + ("onednn", "onednn_e2e", "xnnpack")}
               for layout in ("nchw", "nhwc")},
              "`QDML_ISA=avx2`: ", " at `DNNL_MAX_CPU_ISA=AVX2`")

    def avx2_best(shape):
        cands = [avx2.get("conv/%s/u8s8u8/%s" % (impl, shape)) for impl in SIMD_IMPLS]
        cands = [c for c in cands if isinstance(c, dict)]
        return min(cands, key=lambda c: c["ns"]) if cands else None

    for shape, want in (("3x3_64_64_56", 0.9), ("1x1_256_64_56", 1.1)):
        ratio_line("`QDML_ISA=avx2`: `conv/u8s8u8/%s_nchw` >= %.2gx oneDNN end to end at `DNNL_MAX_CPU_ISA=AVX2`"
                   % (shape, want), avx2_best(shape + "_nchw"),
                   avx2.get("conv/onednn_e2e/u8s8u8/%s_nchw" % shape), want)
        ratio_line("`QDML_ISA=avx2`: `conv/u8s8u8/%s_nhwc` >= 0.85x oneDNN NHWC at `DNNL_MAX_CPU_ISA=AVX2`"
                   % shape, avx2_best(shape + "_nhwc"), avx2.get("conv/onednn/u8s8u8/%s_nhwc" % shape), 0.85)
    peak = rows.get(ISA_PEAK["avx2"])
    for layout in ("nchw", "nhwc"):
        ours = avx2_best("3x3_64_64_56_" + layout)
        text = "`QDML_ISA=avx2`: `conv/u8s8u8/3x3_64_64_56_%s` >= 75%% of `avx2_vpmaddwd` peak" % layout
        ok = isinstance(ours, dict) and isinstance(peak, dict) and ours.get("OPS")
        add("9", text, "%.1f%%" % (100 * ours["OPS"] / peak["OPS"]) if ok else "not measured",
            ours["OPS"] / peak["OPS"] >= 0.75 if ok else None)


def report(data, rows, command, image="performance.png"):
    ctx = data.get("context", {})
    body, stream_bps, dot = table(rows)
    out = [BEGIN, ""]
    out.append("Measured %s on %s (%s), flags: %s; %s CPUs, threads: %s; qdml-bench: %s build; "
               "1-minute load average of the machine %s."
               % (ctx.get("date", "?")[:16].replace("T", " "), ctx.get("qdml_cpu_model", "?"),
                  ctx.get("host_name", "?"), ctx.get("qdml_cpu_flags", "?"), ctx.get("num_cpus", "?"),
                  ctx.get("qdml_threads", "1"), ctx.get("qdml_build", "unoptimized"),
                  data.get("qdml_load_average", "not recorded")))
    if ctx.get("qdml_gemm_isa"):
        out[-1] += " GEMM engine path of the `simd` matmul rows: `%s`." % ctx["qdml_gemm_isa"]
    out += ["", "```sh", " ".join(command), "```", ""]
    out += limits_table(rows)
    out += ["", "Element-wise rows of 2^24 elements: % of `hw/stream/u8_f32/16777216` bytes_per_second (smaller "
            "rows run in cache, where that limit does not apply); matmul and conv: % of "
            + ("`%s` (%s)." % (dot[0], fmt_rate(dot[1], "OPS")) if dot else "the dot peak (not measured).")
            + " Times are medians of 5; peer / qdml above 1 means qdml is faster.", ""]
    out += body
    out += isa_table(data, rows)
    out += ["", "![qdml-bench medians against the machine's limits](%s)" % image, "", END]
    return "\n".join(out)


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing for %s (Debian's python3-matplotlib serves /usr/bin/python3): no plot"
              % sys.executable, file=sys.stderr)
        return False
    stream_bps, dot = limits(rows)
    g = groups(rows)
    ew = ("dequantize_linear", "quantized_linear_add", "clip")
    panels = [("element-wise: bytes/s (dashed: hw/stream/u8_f32)", [k for k in g if k[0] in ew],
               "bytes_per_second", stream_bps, "GB/s"),
              ("matmul and conv: OPS (dashed: %s)" % (dot[0] if dot else "-"),
               [k for k in g if k[0] in ("matmul", "conv")], "OPS", dot[1] if dot else None, "GOPS")]
    panels = [p for p in panels if p[1] and p[3]]
    if not panels:
        return False
    impls = []
    for k in g:
        for i in g[k]:
            if i not in impls:
                impls.append(i)
    colors = dict(zip(impls, plt.rcParams["axes.prop_cycle"].by_key()["color"] * 3))
    heights = [max(3.0, 0.32 * len(p[1]) * 2) for p in panels]
    fig, axes = plt.subplots(len(panels), 1, figsize=(10, sum(heights)), squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    for ax, (title, keys, counter, limit, unit) in zip(axes[:, 0], panels):
        n = len(impls)
        width = 0.8 / n
        for j, impl in enumerate(impls):
            ys, xs = [], []
            for y, k in enumerate(keys):
                r = g[k].get(impl)
                if r and r.get(counter):
                    ys.append(y + (j - (n - 1) / 2) * width)
                    xs.append(r[counter] / 1e9)
            if xs:
                ax.barh(ys, xs, height=width, color=colors[impl], label=impl)
        ax.set_yticks(range(len(keys)))
        ax.set_yticklabels(["%s/%s/%s" % k for k in keys], fontsize=7)
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.axvline(limit / 1e9, color="black", linestyle="--", linewidth=1)
        ax.set_xlabel(unit + " (median, log scale)")
        ax.set_title(title, fontsize=9)
        ax.grid(axis="x", which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--bench", help="the qdml-bench binary to run")
    src.add_argument("--json", help="a JSON qdml-bench wrote (no run)")
    ap.add_argument("--filter", default="", help="--benchmark_filter for the run")
    ap.add_argument("--isa", default="",
                    help="comma-separated QDML_ISA caps (amx,avx512vnni,avxvnni,avx2,generic): the matmul SIMD "
                         "and oneDNN rows once more per cap (oneDNN held to the same ISA by DNNL_MAX_CPU_ISA), "
                         "tabled per ISA path")
    ap.add_argument("--out", "--readme", dest="out", default=os.path.join(ROOT, "docs", "perf", "results.md"),
                    help="the Markdown file whose perf-report section is (re)written")
    ap.add_argument("--docs", default=os.path.join(ROOT, "docs"))
    ap.add_argument("--stdout", action="store_true", help="print the section instead of writing files")
    args = ap.parse_args()

    if args.bench:
        data, cmd = run_bench(args.bench, args.filter)
        command = [os.path.relpath(cmd[0], ROOT) if os.path.isabs(cmd[0]) else cmd[0]] + cmd[1:]
        if args.filter:
            command[-1] = "--benchmark_filter='%s'" % args.filter
        if args.isa:
            data["qdml_isa_runs"] = {}
            for isa in args.isa.split(","):
                isa_data, _ = run_bench(args.bench, isa_filter(isa), isa)
                data["qdml_isa_runs"][isa] = [b for b in isa_data["benchmarks"]
                                              if b.get("aggregate_name") == "median" or b.get("error_occurred")]
    else:
        with open(args.json) as f:
            data = json.load(f)
        command = data.get("qdml_command", ["build/bench/qdml-bench", "--benchmark_repetitions=5",
                                            "--benchmark_report_aggregates_only=true", "--benchmark_format=json"])
    data["qdml_command"] = command
    rows = medians(data)
    png = os.path.join(args.docs, "perf", "performance.png")
    image = os.path.relpath(png, os.path.dirname(os.path.abspath(args.out)))
    section = report(data, rows, command, image)
    print("\n".join(targets_table(data, rows)).lstrip("\n"), file=sys.stderr)
    if args.stdout:
        print(section)
        return
    os.makedirs(os.path.join(args.docs, "perf"), exist_ok=True)
    kept = dict(data)  # the medians and the skipped rows: what the tables read
    kept["benchmarks"] = [b for b in data["benchmarks"]
                          if b.get("aggregate_name") == "median" or b.get("error_occurred")]
    with open(os.path.join(args.docs, "perf", "qdml-bench.json"), "w") as f:
        json.dump(kept, f, indent=1)
        f.write("\n")
    plotted = plot(rows, png)
    try:
        with open(args.out) as f:
            doc = f.read()
    except FileNotFoundError:
        doc = "# Performance\n"
    if BEGIN in doc and END in doc:
        doc = doc[:doc.index(BEGIN)] + section + doc[doc.index(END) + len(END):]
    else:
        doc = doc.rstrip("\n") + "\n\n" + section + "\n"
    with open(args.out, "w") as f:
        f.write(doc)
    print("wrote %s%s" % (args.out, ", " + png if plotted else " (no plot)"), file=sys.stderr)


if __name__ == "__main__":
    main()
