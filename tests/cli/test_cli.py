#!/usr/bin/env python3
"""End-to-end tests of the qdml case runner (run, validate, check).

    python3 tests/cli/test_cli.py <path-to-qdml> <source-root>

Python standard library only: .npy files are written and parsed here by hand
(struct), so the tests depend neither on numpy nor on the runner's own .npy
code. Every expected value is derived by hand (see the comments and
examples/cases/README.md). Exit status 0 iff every test passed.
"""

import ast
import json
import math
import os
import platform
import re
import shlex
import struct
import subprocess
import sys
import tempfile
import traceback

if len(sys.argv) != 3:
    sys.exit("usage: test_cli.py <path-to-qdml> <source-root>")
QDML = os.path.abspath(sys.argv[1])
# A cross build's runner runs under Meson's exe_wrapper (MinGW-w64: wine).
WRAPPER = shlex.split(os.environ.get("MESON_EXE_WRAPPER", ""))
IS_WINDOWS = QDML.lower().endswith(".exe")
ROOT = os.path.abspath(sys.argv[2])
CASES = os.path.join(ROOT, "examples", "cases")
with open(QDML, "rb") as _f:  # a sanitizer build: memory figures mean nothing, big runs are slow
    SANITIZED = b"AddressSanitizer" in _f.read()

# DML type -> (.npy descr the runner writes, struct format of one element)
TYPES = {
    "INT8": ("|i1", "b"), "UINT8": ("|u1", "B"), "INT16": ("<i2", "<h"), "UINT16": ("<u2", "<H"),
    "INT32": ("<i4", "<i"), "UINT32": ("<u4", "<I"), "INT64": ("<i8", "<q"), "UINT64": ("<u8", "<Q"),
    "FLOAT32": ("<f4", "<f"), "FLOAT16": ("<f2", "<e"),
}
OPERATORS = ["ELEMENT_WISE_DEQUANTIZE_LINEAR", "ELEMENT_WISE_QUANTIZE_LINEAR", "ELEMENT_WISE_QUANTIZED_LINEAR_ADD",
             "QUANTIZED_LINEAR_MATRIX_MULTIPLY", "QUANTIZED_LINEAR_CONVOLUTION", "ELEMENT_WISE_CLIP",
             "MATRIX_MULTIPLY_INTEGER", "ELEMENT_WISE_CLIP1", "CONVOLUTION_INTEGER", "MATRIX_MULTIPLY_INTEGER_TO_FLOAT",
             "DYNAMIC_QUANTIZE_LINEAR", "QUANTIZED_LINEAR_AVERAGE_POOLING"]
# Operators with several outputs: their members, in member order ("expected" keyed by them, --out DIR/<Member>.npy)
OUTPUTS = {"DYNAMIC_QUANTIZE_LINEAR": ["OutputTensor", "OutputScaleTensor", "OutputZeroPointTensor"]}

# ---------------------------------------------------------------------------
# .npy by hand


def npy_bytes(descr, shape, data, fortran=False, header=None):
    """A version 1.0 .npy file; `header` replaces the dict text if given."""
    if header is None:
        dims = "".join("%d, " % d for d in shape) if len(shape) != 1 else "%d," % shape[0]
        header = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (
            descr, "True" if fortran else "False", dims.rstrip(", ") if len(shape) > 1 else dims)
    pad = (64 - (10 + len(header) + 1) % 64) % 64
    header = header + " " * pad + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1") + data


def pack(dml_type, values):
    fmt = TYPES[dml_type][1]
    return b"".join(struct.pack(fmt, v) for v in values)


def npy(dml_type, shape, values, **kw):
    return npy_bytes(TYPES[dml_type][0], shape, pack(dml_type, values), **kw)


class Npy:
    def __init__(self, path):
        with open(path, "rb") as f:
            raw = f.read()
        assert raw[:6] == b"\x93NUMPY", "%s: bad magic %r" % (path, raw[:6])
        self.version = (raw[6], raw[7])
        if raw[6] == 1:
            hlen, start = struct.unpack("<H", raw[8:10])[0], 10
        else:
            hlen, start = struct.unpack("<I", raw[8:12])[0], 12
        text = raw[start:start + hlen].decode("latin1")
        assert len(text) == hlen, "%s: truncated header" % path
        assert text.endswith("\n"), "%s: header does not end with a newline" % path
        assert (start + hlen) % 64 == 0, "%s: header not padded to a multiple of 64 bytes" % path
        d = ast.literal_eval(text.strip())
        assert set(d) == {"descr", "fortran_order", "shape"}, "%s: header keys %r" % (path, sorted(d))
        self.descr, self.fortran, self.shape = d["descr"], d["fortran_order"], tuple(d["shape"])
        self.data = raw[start + hlen:]

    def values(self, dml_type):
        fmt = TYPES[dml_type][1]
        n = struct.calcsize(fmt)
        assert len(self.data) % n == 0
        return [struct.unpack(fmt, self.data[i:i + n])[0] for i in range(0, len(self.data), n)]


def same_elements(dml_type, got, want):
    """Identical bits, except that any NaN matches any NaN (tolerance 0)."""
    if len(got.data) != len(want.data):
        return "data sizes differ: %d vs %d bytes" % (len(got.data), len(want.data))
    g, w = got.values(dml_type), want.values(dml_type)
    n = struct.calcsize(TYPES[dml_type][1])
    for i, (a, b) in enumerate(zip(g, w)):
        if isinstance(a, float) and math.isnan(a) and math.isnan(b):
            continue
        if got.data[i * n:(i + 1) * n] != want.data[i * n:(i + 1) * n]:
            return "element %d: got %r, expected %r" % (i, a, b)
    return None


# ---------------------------------------------------------------------------
# Running the tool and checking its answers


def windows_paths(p):
    """A Windows runner's output with its path separators as the tests
    write them: std::filesystem joins with '\\' there, so a case found
    under /tmp/x is /tmp/x\\b\\case.json (a backslash between two name
    characters becomes '/'; '\\x93' in a message stays)."""
    if IS_WINDOWS:
        p.stdout = re.sub(r"(?<=[\w.-])\\(?=[\w.-])", "/", p.stdout)
        p.stderr = re.sub(r"(?<=[\w.-])\\(?=[\w.-])", "/", p.stderr)
    return p


def qdml(*args, cwd=None):
    return windows_paths(subprocess.run(WRAPPER + [QDML] + [str(a) for a in args], capture_output=True, text=True,
                                        errors="replace", timeout=120, cwd=cwd))


def describe(p):
    return "exit %d\n  stdout: %r\n  stderr: %r" % (p.returncode, p.stdout[-2000:], p.stderr[-2000:])


def expect_exit(p, code):
    assert p.returncode == code, "expected exit %d, got %s" % (code, describe(p))


def expect_one_error_line(p, *mentions):
    """Exit 2, exactly one stderr line 'qdml: ...' mentioning each string."""
    expect_exit(p, 2)
    lines = p.stderr.splitlines()
    assert len(lines) == 1, "expected exactly one stderr line, got %s" % describe(p)
    assert lines[0].startswith("qdml: "), "stderr line does not start with 'qdml: ': %r" % lines[0]
    for m in mentions:
        assert m in lines[0], "stderr line does not mention %r: %r" % (m, lines[0])
    return lines[0]


def write_case(directory, case, files=None, name="case.json"):
    os.makedirs(directory, exist_ok=True)
    for fname, content in (files or {}).items():
        with open(os.path.join(directory, fname), "wb") as f:
            f.write(content)
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write(case if isinstance(case, str) else json.dumps(case))
    return path


def load_json(path):
    with open(path) as f:
        return json.load(f)


def example_cases():
    found = []
    for dirpath, _, files in os.walk(CASES):
        found += [os.path.join(dirpath, f) for f in files if f.endswith(".json")]
    return sorted(found)


def run_and_read(case_path, tmp, out_name="out.npy", *args):
    out = os.path.join(tmp, out_name)
    p = qdml("run", case_path, "--out", out, *args)
    expect_exit(p, 0)
    assert os.path.isfile(out), "run exited 0 but wrote no %s" % out
    return Npy(out)


def check_output(got, dml_type, sizes, want_values):
    """`got` has the runner's dtype for dml_type, shape `sizes`, C order and
    the given values (floats compared by bits, NaN matching NaN)."""
    assert got.descr == TYPES[dml_type][0], "dtype %r, expected %r" % (got.descr, TYPES[dml_type][0])
    assert got.fortran is False, "fortran_order is not False"
    assert got.shape == tuple(sizes), "shape %r, expected %r" % (got.shape, tuple(sizes))
    want = Npy.__new__(Npy)
    want.data = pack(dml_type, want_values)
    err = same_elements(dml_type, got, want)
    assert err is None, err


TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


# ---------------------------------------------------------------------------
# A small valid matmul case that the bad-input tests break one way at a time.
# A = [[1,2],[3,4]] (UINT8, from a.npy), B = identity, every scale 1 and no
# zero points: acc = A, mult = fp32(1*1)/1 = 1, so Output = A = [[1,2],[3,4]].


def base_matmul():
    case = {
        "operator": "QUANTIZED_LINEAR_MATRIX_MULTIPLY",
        "tensors": {
            "ATensor": {"type": "UINT8", "sizes": [2, 2], "data": "a.npy"},
            "AScaleTensor": {"type": "FLOAT32", "sizes": [1, 1], "data": "s.npy"},
            "BTensor": {"type": "UINT8", "sizes": [2, 2], "values": [1, 0, 0, 1]},
            "BScaleTensor": {"type": "FLOAT32", "sizes": [1, 1], "values": [1.0]},
            "OutputScaleTensor": {"type": "FLOAT32", "sizes": [1, 1], "values": [1.0]},
            "OutputTensor": {"type": "UINT8", "sizes": [2, 2]},
        },
        "params": {},
    }
    files = {"a.npy": npy("UINT8", [2, 2], [1, 2, 3, 4]), "s.npy": npy("FLOAT32", [1], [1.0])}
    return case, files


def base_clip(dml_type, values, sizes, out_strides=None, lo=-1e30, hi=1e30, data=True):
    case = {
        "operator": "ELEMENT_WISE_CLIP",
        "tensors": {"InputTensor": {"type": dml_type, "sizes": sizes},
                    "OutputTensor": {"type": dml_type, "sizes": sizes}},
        "params": {"Min": lo, "Max": hi},
    }
    files = {}
    if data:
        case["tensors"]["InputTensor"]["data"] = "x.npy"
        files["x.npy"] = npy(dml_type, [len(values)], values)
    else:
        case["tensors"]["InputTensor"]["values"] = values
    if out_strides is not None:
        case["tensors"]["OutputTensor"]["strides"] = out_strides
    return case, files


@test
def base_case_runs(tmp):
    case, files = base_matmul()
    got = run_and_read(write_case(tmp, case, files), tmp)
    check_output(got, "UINT8", [2, 2], [1, 2, 3, 4])


# ---------------------------------------------------------------------------
# examples/cases


@test
def examples_exist(tmp):
    cases = example_cases()
    ops = {load_json(c)["operator"] for c in cases}
    assert set(OPERATORS) <= ops, "examples/cases lacks %s" % sorted(set(OPERATORS) - ops)
    assert any(load_json(c).get("expected") == {"error": True} for c in cases), "no expected-error example"


@test
def examples_run_matches_expected(tmp):
    """run --out on every example writes the expected tensor (parsed here)."""
    for i, c in enumerate(example_cases()):
        j = load_json(c)
        out = os.path.join(tmp, "out%d.npy" % i)
        p = qdml("run", c, "--out", out)
        if j.get("expected") == {"error": True}:
            expect_one_error_line(p, c)
            assert not os.path.exists(out), "%s: output written for an expected-error case" % c
            continue
        assert p.returncode == 0, "%s: %s" % (c, describe(p))
        members = OUTPUTS.get(j["operator"], ["OutputTensor"])
        for m in members:
            ot = j["tensors"][m]
            exp = j["expected"][m] if len(members) > 1 else j["expected"]
            got = Npy(os.path.join(out, m + ".npy") if len(members) > 1 else out)
            want = Npy(os.path.join(os.path.dirname(c), exp["data"]))
            assert got.descr == TYPES[ot["type"]][0], "%s: %s: dtype %r" % (c, m, got.descr)
            assert got.descr == want.descr, "%s: %s: dtype %r, expected .npy has %r" % (c, m, got.descr, want.descr)
            assert got.fortran is False
            assert got.shape == tuple(ot["sizes"]), "%s: %s: shape %r, sizes %r" % (c, m, got.shape, ot["sizes"])
            assert exp.get("tolerance", 0) == 0, "%s: examples are bit-exact" % c
            err = same_elements(ot["type"], got, want)
            assert err is None, "%s: %s: %s" % (c, m, err)


@test
def examples_validate(tmp):
    for c in example_cases():
        p = qdml("validate", c)
        if load_json(c).get("expected") == {"error": True}:
            expect_one_error_line(p, c, "QUANTIZED_LINEAR_MATRIX_MULTIPLY")
        else:
            expect_exit(p, 0)
            assert p.stdout.strip() == "valid", "%s: stdout %r" % (c, p.stdout)


def count_lines(stdout):
    """check's per-operator and total lines as (passed, failed, not compared)."""
    counts = {}
    for line in stdout.splitlines():
        m = re.fullmatch(r"([A-Z0-9_]+|\(unreadable case\)): (\d+) passed, (\d+) failed, (\d+) not compared", line)
        if m:
            counts[m.group(1)] = tuple(int(m.group(k)) for k in (2, 3, 4))
    total = re.search(r"^total: (\d+) passed, (\d+) failed, (\d+) not compared(;.*)?$", stdout, re.M)
    return counts, (total and tuple(int(total.group(k)) for k in (1, 2, 3)))


@test
def check_examples_counts(tmp):
    cases = example_cases()
    want = {}
    for c in cases:
        op = load_json(c)["operator"]
        want[op] = (want.get(op, (0, 0, 0))[0] + 1, 0, 0)
    p = qdml("check", CASES)
    expect_exit(p, 0)
    counts, total = count_lines(p.stdout)
    assert counts == want, "per-operator lines %r, expected %r\n%s" % (counts, want, describe(p))
    assert total == (len(cases), 0, 0), "total line %r, expected %r" % (total, (len(cases), 0, 0))
    assert "FAIL" not in p.stdout


@test
def check_verbose_lists_every_case(tmp):
    p = qdml("check", "--verbose", CASES)
    expect_exit(p, 0)
    for c in example_cases():
        rel = os.path.relpath(c, CASES)
        assert any(l.startswith("PASS ") and l.split()[1].endswith(rel) for l in p.stdout.splitlines()), \
            "no PASS line for %s\n%s" % (rel, describe(p))


@test
def run_verbose_names_the_path(tmp):
    # --verbose names the implementation, the ISA path and the form; --isa caps
    # the path (generic runs everywhere: the NCHW GEMM form, the depthwise
    # path's portable kernels, the generic micro-kernel).
    cases = {"matmul_u8_per_column": "simd gemm generic",
             "conv_padding_groups": "simd depthwise-rows generic"}  # one input channel per group
    for name, want in cases.items():
        c = os.path.join(CASES, name, "case.json")
        p = qdml("run", "--impl", "simd", "--isa", "generic", "--fidelity", "exact", "--verbose", c)
        expect_exit(p, 0)
        assert "%s: computed by %s, fidelity exact\n" % (c, want) in p.stdout, describe(p)
        p = qdml("run", "--verbose", c)  # the default profile: directml
        expect_exit(p, 0)
        assert "%s: computed by reference, fidelity directml\n" % c in p.stdout, describe(p)
    # The GEMM engine and the depthwise path compute the directml profile too.
    c = os.path.join(CASES, "matmul_u8_per_column", "case.json")
    p = qdml("run", "--impl", "simd", "--isa", "generic", "-v", c)
    expect_exit(p, 0)
    assert "%s: computed by simd gemm generic, fidelity directml\n" % c in p.stdout, describe(p)
    c = os.path.join(CASES, "conv_padding_groups", "case.json")
    p = qdml("run", "--impl", "simd", "--isa", "generic", "-v", c)
    expect_exit(p, 0)
    assert "%s: computed by simd depthwise-rows generic, fidelity directml\n" % c in p.stdout, describe(p)
    c = os.path.join(CASES, "add_i8_u8_ties", "case.json")
    p = qdml("run", "--impl", "simd", "-v", c)
    expect_exit(p, 0)
    assert "%s: computed by simd element-wise " % c in p.stdout, describe(p)
    # The element-wise path is chosen at run time too, and --isa caps it:
    # generic gives the portable path (SSE2 on x86-64, NEON on AArch64).
    p = qdml("run", "--impl", "simd", "--isa", "generic", "-v", c)
    expect_exit(p, 0)
    portable = "arm64+neon" if platform.machine() in ("aarch64", "arm64") else "sse2"  # xsimd 8.1's arch names
    assert "%s: computed by simd element-wise %s, fidelity directml\n" % (c, portable) in p.stdout, describe(p)
    p = qdml("run", "--impl", "simd", "--isa", "avx9000", c)
    expect_exit(p, 2)
    assert "--isa: unknown path 'avx9000'" in p.stderr, describe(p)


@test
def check_expected_error_counts_as_pass(tmp):
    c = os.path.join(CASES, "error_matmul_k_mismatch", "case.json")
    p = qdml("check", c)
    expect_exit(p, 0)
    counts, total = count_lines(p.stdout)
    assert counts == {"QUANTIZED_LINEAR_MATRIX_MULTIPLY": (1, 0, 0)}, describe(p)
    assert total == (1, 0, 0), describe(p)


@test
def run_expected_error_case(tmp):
    c = os.path.join(CASES, "error_matmul_k_mismatch", "case.json")
    out = os.path.join(tmp, "out.npy")
    expect_one_error_line(qdml("run", c, "--out", out), c, "QUANTIZED_LINEAR_MATRIX_MULTIPLY", "BTensor")
    assert os.listdir(tmp) == [], "files left behind: %r" % os.listdir(tmp)


# ---------------------------------------------------------------------------
# check: failures, empty and missing paths


@test
def check_reports_failures(tmp):
    case, files = base_matmul()
    good = dict(case, expected={"data": "e.npy", "tolerance": 0})
    files["e.npy"] = npy("UINT8", [2, 2], [1, 2, 3, 4])
    write_case(os.path.join(tmp, "a_good"), good, files)
    files_bad = dict(files, **{"e.npy": npy("UINT8", [2, 2], [1, 2, 3, 5])})
    bad = write_case(os.path.join(tmp, "b_bad", "deeper"), good, files_bad)
    p = qdml("check", tmp)
    expect_exit(p, 1)
    counts, total = count_lines(p.stdout)
    assert counts == {"QUANTIZED_LINEAR_MATRIX_MULTIPLY": (1, 1, 0)}, describe(p)
    assert total == (1, 1, 0), describe(p)
    fails = [l for l in p.stdout.splitlines() if l.startswith("FAIL")]
    assert len(fails) == 1 and bad in fails[0], "FAIL lines %r" % fails
    # the failing case alone
    p = qdml("check", bad)
    expect_exit(p, 1)
    assert count_lines(p.stdout)[1] == (0, 1, 0), describe(p)


@test
def check_unexpectedly_valid_error_case_fails(tmp):
    case, files = base_matmul()
    c = write_case(tmp, dict(case, expected={"error": True}), files)
    p = qdml("check", c)
    expect_exit(p, 1)
    assert count_lines(p.stdout)[1] == (0, 1, 0), describe(p)
    p = qdml("run", c)
    expect_exit(p, 1)
    assert "expected an error" in p.stderr, describe(p)


@test
def check_malformed_case_fails(tmp):
    write_case(tmp, "{", name="broken.json")
    p = qdml("check", tmp)
    expect_exit(p, 1)
    assert "FAIL" in p.stdout and "broken.json" in p.stdout, describe(p)


@test
def check_empty_directory(tmp):
    os.makedirs(os.path.join(tmp, "empty", "sub"))
    with open(os.path.join(tmp, "empty", "sub", "notes.txt"), "w") as f:
        f.write("not a case\n")
    p = qdml("check", os.path.join(tmp, "empty"))
    expect_exit(p, 1)
    counts, total = count_lines(p.stdout)
    assert total == (0, 0, 0), describe(p)


@test
def check_nonexistent_path(tmp):
    expect_exit(qdml("check", os.path.join(tmp, "no_such_dir")), 1)
    # a missing path next to passing cases still fails the run
    expect_exit(qdml("check", CASES, os.path.join(tmp, "no_such_case.json")), 1)


# ---------------------------------------------------------------------------
# run: comparison with expected, tolerance, --out optional


@test
def run_mismatch_message_and_output(tmp):
    case, files = base_matmul()
    # Output is [[1,2],[3,4]]; expected differs at [1,0] (9) and [1,1] (7)
    files["e.npy"] = npy("UINT8", [2, 2], [1, 2, 9, 7])
    c = write_case(tmp, dict(case, expected={"data": "e.npy", "tolerance": 0}), files)
    out = os.path.join(tmp, "out.npy")
    p = qdml("run", c, "--out", out)
    expect_exit(p, 1)
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("qdml: " + c + ": "), describe(p)
    assert re.search(r"mismatch at element \[1,0\]: got 3, expected 9 \(.*tolerance 0\)", lines[0]), lines[0]
    check_output(Npy(out), "UINT8", [2, 2], [1, 2, 3, 4])  # still written


@test
def run_tolerance(tmp):
    case, files = base_matmul()
    files["e1.npy"] = npy("UINT8", [4], [2, 1, 4, 3])  # off by one everywhere; shape [4] = same count
    files["e2.npy"] = npy("UINT8", [2, 2], [1, 2, 3, 6])  # off by two at [1,1]
    c1 = write_case(tmp, dict(case, expected={"data": "e1.npy", "tolerance": 1}), files, name="c1.json")
    c2 = write_case(tmp, dict(case, expected={"data": "e2.npy", "tolerance": 1}), files, name="c2.json")
    c3 = write_case(tmp, dict(case, expected={"data": "e1.npy", "tolerance": 0}), files, name="c3.json")
    expect_exit(qdml("run", c1), 0)
    p = qdml("run", c2)
    expect_exit(p, 1)
    assert "[1,1]" in p.stderr and "tolerance 1" in p.stderr, describe(p)
    expect_exit(qdml("run", c3), 1)


@test
def run_without_out_prints_a_summary(tmp):
    case, files = base_matmul()
    src = os.path.join(tmp, "src")
    c = write_case(src, case, files)
    work = os.path.join(tmp, "work")
    os.makedirs(work)
    before = sorted(os.listdir(src))
    p = qdml("run", c, cwd=work)
    expect_exit(p, 0)
    assert os.listdir(work) == [] and sorted(os.listdir(src)) == before, "run without --out wrote files"
    # not silent: one stdout line saying what was computed and that nothing was written
    assert p.stdout.splitlines() == [c + ": QUANTIZED_LINEAR_MATRIX_MULTIPLY: computed OutputTensor UINT8 {2,2}; "
                                     "not written (no --out)"], describe(p)
    files["e.npy"] = npy("UINT8", [2, 2], [1, 2, 3, 4])
    c = write_case(src, dict(case, expected={"data": "e.npy"}), files, name="e.json")
    p = qdml("run", c)
    expect_exit(p, 0)
    assert ", equal to expected; not written (no --out)" in p.stdout, describe(p)
    # with --out: nothing on stdout
    p = qdml("run", c, "--out", os.path.join(work, "o.npy"))
    expect_exit(p, 0)
    assert p.stdout == "", describe(p)


@test
def buffer_longer_than_needed(tmp):
    # docs/case-format.md: a buffer holds at least dot(sizes-1, strides)+1
    # elements; trailing ones are ignored. A needs 4 elements; a.npy holds 6
    # (shape [6]: 1,2,3,4 then 99,99), B's values 4 + 2. Output as in the base
    # case: A = [[1,2],[3,4]].
    case, files = base_matmul()
    files["a.npy"] = npy("UINT8", [6], [1, 2, 3, 4, 99, 99])
    tensor(case, "BTensor")["values"] = [1, 0, 0, 1, 7, 8]
    got = run_and_read(write_case(tmp, case, files), tmp)
    check_output(got, "UINT8", [2, 2], [1, 2, 3, 4])
    # a strided A: sizes [2,2] strides [3,1] needs 3*1+1*1+1 = 5 elements (a
    # gap at index 2); a.npy holds 7. A = [[1,2],[4,5]] from [1,2,0,4,5,0,0].
    case, files = base_matmul()
    tensor(case, "ATensor")["strides"] = [3, 1]
    files["a.npy"] = npy("UINT8", [7], [1, 2, 0, 4, 5, 0, 0])
    got = run_and_read(write_case(os.path.join(tmp, "s"), case, files), tmp, "s.npy")
    check_output(got, "UINT8", [2, 2], [1, 2, 4, 5])
    # a trailing value must still be a value of the type
    case, files = base_matmul()
    tensor(case, "BTensor")["values"] = [1, 0, 0, 1, 300]
    expect_one_error_line(qdml("validate", write_case(os.path.join(tmp, "t"), case, files)), "BTensor", "300")


# ---------------------------------------------------------------------------
# An operator with several outputs: DYNAMIC_QUANTIZE_LINEAR. The input [-2, 0,
# 1, 3] (FLOAT32) has the range [-2, 3]: M - m = 5; in the exact profile s =
# fp32(5 / 255) and (numpy, binary32) -m / s = 102 and x / s = 51 x exactly,
# so z = 102 and the outputs Q(-102, 102) = 0, 102, Q(51, 102) = 153,
# Q(153, 102) = 255.


def base_dynamic_quantize(expected=True):
    case = {
        "operator": "DYNAMIC_QUANTIZE_LINEAR",
        "tensors": {
            "InputTensor": {"type": "FLOAT32", "sizes": [2, 2], "values": [-2, 0, 1, 3]},
            "OutputTensor": {"type": "UINT8", "sizes": [2, 2]},
            "OutputScaleTensor": {"type": "FLOAT32", "sizes": [1, 1]},
            "OutputZeroPointTensor": {"type": "UINT8", "sizes": [1, 1]},
        },
    }
    files = {"y.npy": npy("UINT8", [2, 2], [0, 102, 153, 255]),
             "s.npy": npy("FLOAT32", [1, 1], [struct.unpack("<f", struct.pack("<f", 5.0 / 255.0))[0]]),
             "z.npy": npy("UINT8", [1, 1], [102])}
    if expected:
        case["expected"] = {"OutputTensor": {"data": "y.npy"}, "OutputScaleTensor": {"data": "s.npy", "tolerance": 0},
                            "OutputZeroPointTensor": {"data": "z.npy"}, "fidelity": "exact"}
    return case, files


@test
def several_outputs_run_out_directory(tmp):
    case, files = base_dynamic_quantize()
    c = write_case(os.path.join(tmp, "case"), case, files)
    out = os.path.join(tmp, "out")  # created by the runner
    p = qdml("run", c, "--out", out)
    expect_exit(p, 0)
    assert p.stdout == "", describe(p)
    assert sorted(os.listdir(out)) == ["OutputScaleTensor.npy", "OutputTensor.npy", "OutputZeroPointTensor.npy"], \
        os.listdir(out)
    check_output(Npy(os.path.join(out, "OutputTensor.npy")), "UINT8", [2, 2], [0, 102, 153, 255])
    check_output(Npy(os.path.join(out, "OutputScaleTensor.npy")), "FLOAT32", [1, 1],
                 [struct.unpack("<f", struct.pack("<f", 5.0 / 255.0))[0]])
    check_output(Npy(os.path.join(out, "OutputZeroPointTensor.npy")), "UINT8", [1, 1], [102])
    expect_exit(qdml("run", c, "--out", out), 0)  # an existing directory: written again
    # without --out: one line naming every output
    p = qdml("run", c)
    expect_exit(p, 0)
    assert p.stdout.splitlines() == [c + ": DYNAMIC_QUANTIZE_LINEAR: computed OutputTensor UINT8 {2,2}, "
                                     "OutputScaleTensor FLOAT32 {1,1}, OutputZeroPointTensor UINT8 {1,1}, "
                                     "equal to expected; not written (no --out)"], describe(p)
    # --out naming a file: refused, nothing written
    f = os.path.join(tmp, "file.npy")
    open(f, "wb").close()
    expect_one_error_line(qdml("run", c, "--out", f), f, "is not a directory", "3 outputs", "DIR/<Member>.npy")
    assert os.path.getsize(f) == 0
    expect_one_error_line(qdml("run", c, "--out", os.path.join(tmp, "no", "such")), "does not exist")
    # --out naming the case's own directory, whose y.npy is not a member file: fine; a member file the case reads: refused
    files2 = dict(files)
    files2["OutputTensor.npy"] = files["y.npy"]
    case2, _ = base_dynamic_quantize()
    case2["expected"]["OutputTensor"]["data"] = "OutputTensor.npy"
    c2 = write_case(os.path.join(tmp, "case2"), case2, files2)
    expect_one_error_line(qdml("run", c2, "--out", os.path.join(tmp, "case2")), "a file the case reads")
    # check and --check-exact
    p = qdml("check", c)
    expect_exit(p, 0)
    assert count_lines(p.stdout)[1] == (1, 0, 0), describe(p)
    p = qdml("run", c, "--check-exact")
    expect_exit(p, 0)
    assert re.search(r"exact check: 6 elements, \d+ differ .*; 0 unexplained\)", p.stdout), describe(p)


@test
def several_outputs_check_exact_explains_every_difference(tmp):
    """--check-exact on ONNX Runtime's DYNAMIC_QUANTIZE_LINEAR cases, both profiles: every difference from
    the exactly rounded outputs explained (the scale's binary32 rounding; DirectML's s = (M - m) *
    fp32(1/255) in the directml profile), each naming its output member."""
    root = os.path.join(ROOT, "tests", "data", "ort", "dynamic_quantize")
    reasons = {}
    for name in sorted(os.listdir(root)):
        c = os.path.join(root, name, "case.json")
        for fidelity in ("exact", "directml"):
            p = qdml("run", c, "--check-exact", "--fidelity", fidelity)
            if fidelity == "exact":
                expect_exit(p, 0)
            m = re.search(r"exact check: \d+ elements, (\d+) differ .*; (\d+) unexplained\)", p.stdout)
            assert m and m.group(2) == "0", "%s %s: %s" % (name, fidelity, describe(p))
            for line in p.stdout.splitlines():
                d = re.match(r"  (OutputScaleTensor|OutputZeroPointTensor|OutputTensor)? ?\[.*\) ([a-z0-9-]+)", line)
                if d:
                    reasons[(fidelity, d.group(1), d.group(2))] = reasons.get((fidelity, d.group(1), d.group(2)), 0) + 1
    assert ("exact", "OutputScaleTensor", "near-tie") in reasons, reasons
    assert ("directml", "OutputScaleTensor", "directml-dynamic-quantize") in reasons, reasons
    # zero_point_rounding: the exact profile's binary32 zero point (100) is not the exactly rounded one
    # (101); the outputs quantized about it differ by one, explained only by the checker's binary32
    # zero-point step (not near a tie)
    assert ("exact", "OutputZeroPointTensor", "near-tie") in reasons, reasons
    assert ("exact", None, "binary32-rounding") in reasons, reasons  # (OutputTensor lines name no member)


@test
def average_pooling_check_exact_explains_every_difference(tmp):
    """--check-exact on DirectML's QUANTIZED_LINEAR_AVERAGE_POOLING cases, both profiles: every difference from
    the exactly rounded output explained (binary32 sums near ties; in the directml profile DirectML's NaN
    rule for windows without input elements), with 4-D indices for a 4-D output."""
    root = os.path.join(ROOT, "tests", "data", "directml", "average_pooling")
    reasons = set()
    for name in ("ties_u8_0", "ties_i8_2", "nan_window_no_zp_i8", "nan_window_zp_per_channel_u8", "random_u8_3"):
        c = os.path.join(root, name, "case.json")
        for fidelity in ("exact", "directml"):
            p = qdml("run", c, "--check-exact", "--fidelity", fidelity)
            m = re.search(r"exact check: \d+ elements, (\d+) differ .*; (\d+) unexplained\)", p.stdout)
            assert m and m.group(2) == "0", "%s %s: %s" % (name, fidelity, describe(p))
            for line in p.stdout.splitlines():
                d = re.match(r"  \[(\d+(?:,\d+)*)\] .*\) ([a-z0-9-]+)", line)
                if d:
                    assert len(d.group(1).split(",")) in (4, 5), line
                    reasons.add((fidelity, d.group(2)))
    assert ("exact", "near-tie") in reasons, reasons
    assert ("directml", "directml-average-pooling-nan") in reasons, reasons


@test
def several_outputs_mismatch_names_the_member(tmp):
    case, files = base_dynamic_quantize()
    files["z.npy"] = npy("UINT8", [1, 1], [101])
    c = write_case(tmp, case, files)
    p = qdml("run", c)
    expect_exit(p, 1)
    assert re.search(r": OutputZeroPointTensor: mismatch at element \[0,0\]: got 102, expected 101", p.stderr), describe(p)
    files["z.npy"] = npy("UINT8", [1, 1], [102])
    files["y.npy"] = npy("UINT8", [2, 2], [0, 102, 153, 254])
    c = write_case(tmp, case, files)
    p = qdml("run", c)
    expect_exit(p, 1)
    assert re.search(r": OutputTensor: mismatch at element \[1,1\]: got 255, expected 254", p.stderr), describe(p)


@test
def several_outputs_malformed_expected(tmp):
    """Each malformed "expected" of an operator with several outputs: exit 2, one line naming the rule."""
    ok, files = base_dynamic_quantize()
    members = "OutputTensor, OutputScaleTensor, OutputZeroPointTensor"
    bad = [
        # a single output's form
        ({"data": "y.npy"}, ["expected.data", "3 outputs", "keyed by output member", members]),
        ({"tolerance": 0, "OutputTensor": {"data": "y.npy"}}, ["expected.tolerance", "keyed by output member"]),
        # a member missing, not an object, with an unknown field, without data, a bad tolerance
        ({"OutputTensor": {"data": "y.npy"}, "OutputScaleTensor": {"data": "s.npy"}},
         ["expected.OutputZeroPointTensor: missing", members]),
        (dict(ok["expected"], OutputScaleTensor="s.npy"), ["expected.OutputScaleTensor: must be an object", "string"]),
        (dict(ok["expected"], OutputScaleTensor={"data": "s.npy", "fidelity": "exact"}),
         ["expected.OutputScaleTensor: unknown field 'fidelity'", "allowed: data, tolerance"]),
        (dict(ok["expected"], OutputZeroPointTensor={"tolerance": 1}), ["expected.OutputZeroPointTensor.data: missing"]),
        (dict(ok["expected"], OutputTensor={"data": "y.npy", "tolerance": -1}),
         ["expected.OutputTensor.tolerance: must be a number >= 0"]),
        # an input member, an unknown key
        (dict(ok["expected"], InputTensor={"data": "y.npy"}), ["expected: unknown field 'InputTensor'", members]),
        # the wrong element count or dtype for the member
        (dict(ok["expected"], OutputScaleTensor={"data": "y.npy"}), ["y.npy"]),
        (dict(ok["expected"], OutputZeroPointTensor={"data": "s.npy"}), ["s.npy"]),
        # error with outputs
        (dict(ok["expected"], error=True), ["expected.error: must be true, without output members"]),
    ]
    for i, (expected, mentions) in enumerate(bad):
        case = dict(ok, expected=expected)
        c = write_case(os.path.join(tmp, "b%d" % i), case, files)
        for cmd in ("run", "validate"):
            line = expect_one_error_line(qdml(cmd, c), *mentions)
            assert "case.json" in line or "npy" in line, line
    # an output member given data, as an input would be
    case = dict(ok)
    case["tensors"] = dict(ok["tensors"], OutputScaleTensor={"type": "FLOAT32", "sizes": [1, 1], "values": [1.0]})
    expect_one_error_line(qdml("validate", write_case(os.path.join(tmp, "t"), case, files)), "OutputScaleTensor")
    # an output missing from tensors
    case = dict(ok)
    case["tensors"] = {k: v for k, v in ok["tensors"].items() if k != "OutputZeroPointTensor"}
    expect_one_error_line(qdml("validate", write_case(os.path.join(tmp, "u"), case, files)),
                          "tensors.OutputZeroPointTensor: missing")
    # {"error": true} alone is fine: this case is valid, so run says it expected an error
    case = dict(ok, expected={"error": True})
    p = qdml("run", write_case(os.path.join(tmp, "e"), case, files))
    expect_exit(p, 1)
    assert "expected an error, but the case is valid" in p.stderr, describe(p)
    # a single-output operator keeps its form: a member key is an unknown field
    mm, mfiles = base_matmul()
    mfiles["e.npy"] = npy("UINT8", [2, 2], [1, 2, 3, 4])
    c = write_case(os.path.join(tmp, "m"), dict(mm, expected={"OutputTensor": {"data": "e.npy"}}), mfiles)
    expect_one_error_line(qdml("validate", c), "expected: unknown field 'OutputTensor'", "allowed: data, tolerance")


@test
def several_outputs_overlap_and_limits(tmp):
    # Outputs never overlap (each its own buffer); a too-large OutputTensor is refused by the limit, not as an overlap.
    case, files = base_dynamic_quantize(expected=False)
    case["tensors"]["InputTensor"] = {"type": "FLOAT32", "sizes": [1, 1], "strides": [0, 0], "values": [1.5]}
    for t in ("InputTensor", "OutputTensor"):
        case["tensors"][t]["sizes"] = [65536, 32768]
    case["tensors"]["InputTensor"]["strides"] = [0, 0]
    c = write_case(tmp, case, files)
    expect_one_error_line(qdml("validate", c), "tensors.OutputTensor: output buffer of 2147483648 bytes exceeds")


@test
def out_names_a_directory(tmp):
    c = os.path.join(CASES, "matmul_u8_per_column", "case.json")
    out_dir = os.path.join(tmp, "outdir")
    os.makedirs(out_dir)
    line = expect_one_error_line(qdml("run", c, "--out", out_dir), out_dir, "is a directory")
    assert "Success" not in line, line
    assert os.listdir(tmp) == ["outdir"] and os.listdir(out_dir) == [], os.listdir(tmp)


@test
def out_in_a_missing_directory(tmp):
    c = os.path.join(CASES, "matmul_u8_per_column", "case.json")
    out = os.path.join(tmp, "no_such_dir", "o.npy")
    expect_one_error_line(qdml("run", c, "--out", out), out, "no_such_dir", "does not exist")
    assert os.listdir(tmp) == []


@test
def out_names_a_file_the_case_reads(tmp):
    case, files = base_matmul()
    files["e.npy"] = npy("UINT8", [2, 2], [1, 2, 3, 4])
    c = write_case(tmp, dict(case, expected={"data": "e.npy"}), files)
    snapshot = {f: open(os.path.join(tmp, f), "rb").read() for f in os.listdir(tmp)}
    for target in ("case.json", "a.npy", "e.npy"):
        expect_one_error_line(qdml("run", c, "--out", os.path.join(tmp, target)), target, "a file the case reads")
    # also through another spelling of the same path
    expect_one_error_line(qdml("run", c, "--out", os.path.join(tmp, ".", "case.json")), "a file the case reads")
    after = {f: open(os.path.join(tmp, f), "rb").read() for f in os.listdir(tmp)}
    assert after == snapshot, "a file of the case changed"


@test
def check_counts_a_case_without_expected_as_not_compared(tmp):
    case, files = base_matmul()
    write_case(os.path.join(tmp, "none"), case, files)
    p = qdml("check", os.path.join(tmp, "none"))
    expect_exit(p, 1)  # nothing was compared
    counts, total = count_lines(p.stdout)
    assert counts == {"QUANTIZED_LINEAR_MATRIX_MULTIPLY": (0, 0, 1)} and total == (0, 0, 1), describe(p)
    assert "no case had an expected output" in p.stderr, describe(p)
    files["e.npy"] = npy("UINT8", [2, 2], [1, 2, 3, 4])
    write_case(os.path.join(tmp, "with"), dict(case, expected={"data": "e.npy"}), files)
    p = qdml("check", "--verbose", tmp)
    expect_exit(p, 0)
    counts, total = count_lines(p.stdout)
    assert counts == {"QUANTIZED_LINEAR_MATRIX_MULTIPLY": (1, 0, 1)} and total == (1, 0, 1), describe(p)
    assert "NOT COMPARED " + os.path.join(tmp, "none", "case.json") in p.stdout, describe(p)


@test
def check_skips_json_that_is_not_a_case(tmp):
    case, files = base_matmul()
    files["e.npy"] = npy("UINT8", [2, 2], [1, 2, 3, 4])
    write_case(os.path.join(tmp, "c"), dict(case, expected={"data": "e.npy"}), files)
    pkg = write_case(tmp, {"name": "my-suite", "version": "1.0.0"}, name="package.json")
    write_case(os.path.join(tmp, "c"), [1, 2], name="list.json")  # an array: not a case either
    p = qdml("check", "--verbose", tmp)
    expect_exit(p, 0)
    counts, total = count_lines(p.stdout)
    assert total == (1, 0, 0), describe(p)
    assert "2 JSON files without \"operator\" skipped" in p.stdout, describe(p)
    assert "SKIP " + pkg in p.stdout, describe(p)
    # named on the command line, a file is always a case
    p = qdml("check", pkg)
    expect_exit(p, 1)
    assert count_lines(p.stdout)[1] == (0, 1, 0) and "package.json" in p.stdout, describe(p)


@test
def check_files_a_bad_case_under_its_operator(tmp):
    case, files = base_matmul()
    tensor(case, "BTensor")["sizes"] = [0, 2]  # readable operator, bad sizes
    write_case(os.path.join(tmp, "a"), case, files)
    write_case(os.path.join(tmp, "b"), "{", name="broken.json")
    p = qdml("check", tmp)
    expect_exit(p, 1)
    counts, total = count_lines(p.stdout)
    assert counts == {"QUANTIZED_LINEAR_MATRIX_MULTIPLY": (0, 1, 0), "(unreadable case)": (0, 1, 0)}, describe(p)


def max_rss_mib(*args):
    """Runs qdml in a fresh Python process and returns (its result, its peak
    resident memory in MiB), so that earlier children do not count."""
    code = ("import resource, subprocess, sys\n"
            "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
            "print(p.returncode); print(repr(p.stdout)); print(repr(p.stderr))\n"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    r = subprocess.run([sys.executable, "-c", code] + WRAPPER + [QDML] + [str(a) for a in args], capture_output=True, text=True,
                       timeout=120)
    lines = r.stdout.splitlines()
    result = windows_paths(subprocess.CompletedProcess(args, int(lines[0]), ast.literal_eval(lines[1]),
                                                      ast.literal_eval(lines[2])))
    return result, int(lines[3]) / 1024.0


@test
def validate_allocates_no_output(tmp):
    # clip of one UINT8 broadcast (stride 0) to a 32768 x 32768 output: 1 GiB
    case, files = base_clip("UINT8", [7], [32768, 32768], lo=0, hi=255, data=False)
    tensor(case, "InputTensor")["strides"] = [0, 0]
    c = write_case(tmp, case, files)
    p, rss = max_rss_mib("validate", c)
    expect_exit(p, 0)
    assert p.stdout == "valid\n", describe(p)
    assert rss < 64, "validate of a case with a 1 GiB output peaked at %.0f MiB" % rss
    # invalid (output sizes do not match the input's): rejected, nothing allocated
    tensor(case, "OutputTensor")["sizes"] = [32768, 32767]
    p, rss = max_rss_mib("run", write_case(tmp, case, files), "--out", os.path.join(tmp, "o.npy"))
    expect_one_error_line(p, "ELEMENT_WISE_CLIP", "OutputTensor")
    assert rss < 64, "an invalid case with a 1 GiB output peaked at %.0f MiB" % rss


@test
def run_memory_near_input_plus_output(tmp):
    # clip of 2^26 UINT8 elements (64 MiB) from a .npy to a .npy: the peak
    # stays near input + output (128 MiB), not 4x the output. (Under a
    # sanitizer: 2^20 elements, no bound on the peak.)
    n = 1 << (20 if SANITIZED else 26)
    case, files = base_clip("UINT8", [], [n], lo=0, hi=255)
    files["x.npy"] = npy_bytes("|u1", [n], bytes(range(256)) * (n // 256))
    c = write_case(tmp, case, files)
    out = os.path.join(tmp, "o.npy")
    p, rss = max_rss_mib("run", c, "--out", out)
    expect_exit(p, 0)
    assert SANITIZED or rss < 64 + 64 + 32, "clip of 64 MiB peaked at %.0f MiB" % rss
    with open(out, "rb") as f:
        f.seek(128)
        assert f.read(512) == bytes(range(256)) * 2, "output differs from the input (clip to [0, 255])"
    os.remove(out)


@test
def work_limit(tmp):
    # The 519-byte case: zero-stride A {32768,131071} x B
    # {131071,32768}: 32768*32768*131071 = 2^47 multiply-adds. Refused at once.
    case, files = base_matmul()
    tensor(case, "ATensor").update(sizes=[32768, 131071], strides=[0, 0])
    tensor(case, "BTensor").update(sizes=[131071, 32768], strides=[0, 0], values=[1])
    tensor(case, "OutputTensor")["sizes"] = [32768, 32768]
    files["a.npy"] = npy("UINT8", [1], [1])
    c = write_case(tmp, case, files)
    for cmd in ("validate", "run"):
        p, rss = max_rss_mib(cmd, c, "--out", os.path.join(tmp, "o.npy")) if cmd == "run" else max_rss_mib(cmd, c)
        expect_one_error_line(p, c, "work limit", str(32768 * 32768 * 131071), "multiply-adds", "17179869184",
                              "--max-work")
        assert rss < 64, "%s peaked at %.0f MiB" % (cmd, rss)
    p = qdml("check", c)
    expect_exit(p, 1)
    assert count_lines(p.stdout)[0] == {"QUANTIZED_LINEAR_MATRIX_MULTIPLY": (0, 1, 0)}, describe(p)
    # The base case is 2x2 by 2x2: 4 outputs x K 2 = 8 multiply-adds.
    case, files = base_matmul()
    c = write_case(os.path.join(tmp, "small"), case, files)
    expect_exit(qdml("run", c, "--max-work", 8), 0)
    expect_one_error_line(qdml("run", c, "--max-work", 7), "8 multiply-adds", "limit of 7")
    # element-wise: output elements. Clip of 6 elements.
    case, files = base_clip("INT16", [1, 2, 3, 4, 5, 6], [2, 3])
    c = write_case(os.path.join(tmp, "clip"), case, files)
    expect_exit(qdml("validate", c, "--max-work", 6), 0)
    expect_one_error_line(qdml("validate", c, "--max-work", 5), "6 output elements", "limit of 5")


# ---------------------------------------------------------------------------
# Output layout and dtypes


@test
def strided_output_written_in_logical_order(tmp):
    # clip(x, 2, 5) of x = 1..6 as a {2,3} tensor: [[2,2,3],[4,5,5]], whatever
    # the output's memory layout.
    want = [2, 2, 3, 4, 5, 5]
    for i, strides in enumerate(([1, 2], [4, 1], [8, 2], [3, 1])):
        case, files = base_clip("INT16", [1, 2, 3, 4, 5, 6], [2, 3], strides, lo=2, hi=5)
        got = run_and_read(write_case(os.path.join(tmp, str(i)), case, files), tmp, "o%d.npy" % i)
        check_output(got, "INT16", [2, 3], want)
    # 3-D, fully transposed output (strides [1,2,4]), FLOAT32: identity clip
    vals = [0.5, -1.25, 3.0, 8.0, -0.0, 1e-3, 7.5, -2.0]
    case, files = base_clip("FLOAT32", vals, [2, 2, 2], [1, 2, 4])
    got = run_and_read(write_case(os.path.join(tmp, "t"), case, files), tmp, "t.npy")
    check_output(got, "FLOAT32", [2, 2, 2], [struct.unpack("<f", struct.pack("<f", v))[0] for v in vals])


@test
def broadcast_input_packed_output(tmp):
    # input {2,3} strides [0,1] over the buffer [7,-8,9]: both rows are [7,-8,9];
    # clip to [-5, 8] -> [[7,-5,8],[7,-5,8]]
    case, files = base_clip("INT32", [7, -8, 9], [2, 3], lo=-5, hi=8)
    case["tensors"]["InputTensor"]["strides"] = [0, 1]
    got = run_and_read(write_case(tmp, case, files), tmp)
    check_output(got, "INT32", [2, 3], [7, -5, 8, 7, -5, 8])


@test
def float16_output_dtype(tmp):
    # dequantize UINT8 [0,1,2,255] with zero point 1 and FLOAT16 scale 0.5:
    # (-1)*0.5 = -0.5 (0xB800), 0*0.5 = +0 (0x0000), 1*0.5 = 0.5 (0x3800),
    # 254*0.5 = 127 = 1.984375*2^6 (0x57F0)
    case = {
        "operator": "ELEMENT_WISE_DEQUANTIZE_LINEAR",
        "tensors": {
            "InputTensor": {"type": "UINT8", "sizes": [4], "data": "x.npy"},
            "ScaleTensor": {"type": "FLOAT16", "sizes": [4], "strides": [0], "data": "s.npy"},
            "ZeroPointTensor": {"type": "UINT8", "sizes": [4], "strides": [0], "values": [1]},
            "OutputTensor": {"type": "FLOAT16", "sizes": [4]},
        },
    }
    files = {"x.npy": npy("UINT8", [4], [0, 1, 2, 255]),
             "s.npy": npy_bytes("<f2", [1], struct.pack("<H", 0x3800))}
    got = run_and_read(write_case(tmp, case, files), tmp)
    assert got.descr == "<f2", "FLOAT16 output dtype %r, expected '<f2'" % got.descr
    assert got.shape == (4,)
    assert got.data == struct.pack("<4H", 0xB800, 0x0000, 0x3800, 0x57F0), got.data.hex()


@test
def float16_clip_round_trip(tmp):
    # FLOAT16 in and out, inline values: [1.5, -3, 65504] clipped to [-2, 1000]
    # -> [1.5 (0x3E00), -2 (0xC000), 1000 (0x63D0)]
    case, files = base_clip("FLOAT16", [1.5, -3.0, 65504.0], [3], lo=-2, hi=1000, data=False)
    got = run_and_read(write_case(tmp, case, files), tmp)
    assert got.descr == "<f2" and got.shape == (3,)
    assert got.data == struct.pack("<3H", 0x3E00, 0xC000, 0x63D0), got.data.hex()


@test
def all_integer_output_dtypes(tmp):
    # identity clip (bounds beyond every range saturate to the type's limits)
    # on each type's extremes
    limits = {"INT8": (-128, 127), "UINT8": (0, 255), "INT16": (-32768, 32767), "UINT16": (0, 65535),
              "INT32": (-2**31, 2**31 - 1), "UINT32": (0, 2**32 - 1), "INT64": (-2**63, 2**63 - 1),
              "UINT64": (0, 2**64 - 1)}
    for t, (lo, hi) in limits.items():
        vals = [lo, hi, lo + 1, hi - 1]
        case, files = base_clip(t, vals, [2, 2], lo="-Infinity", hi="Infinity")
        got = run_and_read(write_case(os.path.join(tmp, t), case, files), tmp, t + ".npy")
        check_output(got, t, [2, 2], vals)


@test
def float_special_values(tmp):
    # "NaN", "Infinity", "-Infinity" inline; clip to [-1, 2] in the exact
    # profile: NaN stays NaN, +inf -> 2, -inf -> -1; in the default,
    # directml, NaN becomes Max (docs/semantics.md section 10)
    case, files = base_clip("FLOAT32", ["NaN", "Infinity", "-Infinity", 0.5], [4], lo=-1, hi=2, data=False)
    path = write_case(tmp, case, files)
    v = run_and_read(path, tmp, "out.npy", "--fidelity", "exact").values("FLOAT32")
    assert math.isnan(v[0]) and v[1:] == [2.0, -1.0, 0.5], v
    v = run_and_read(path, tmp, "dml.npy").values("FLOAT32")
    assert v == [2.0, 2.0, -1.0, 0.5], v
    # the same bounds given as strings
    case, files = base_clip("FLOAT32", [5.0, -5.0], [2], lo="-Infinity", hi="Infinity", data=False)
    check_output(run_and_read(write_case(os.path.join(tmp, "b"), case, files), tmp, "b.npy"),
                 "FLOAT32", [2], [5.0, -5.0])


@test
def one_byte_dtypes_any_byte_order_mark(tmp):
    # numpy writes '|u1'; '<u1' and '>u1' describe the same bytes
    for mark in "|<>":
        case, files = base_matmul()
        files["a.npy"] = npy_bytes(mark + "u1", [2, 2], bytes([1, 2, 3, 4]))
        got = run_and_read(write_case(os.path.join(tmp, "m" + str(ord(mark))), case, files), tmp,
                           "o%d.npy" % ord(mark))
        check_output(got, "UINT8", [2, 2], [1, 2, 3, 4])


# ---------------------------------------------------------------------------
# Feature levels


@test
def feature_levels(tmp):
    add = os.path.join(CASES, "add_i8_u8_ties", "case.json")
    # ELEMENT_WISE_QUANTIZED_LINEAR_ADD: DirectML.h declares it for
    # DML_TARGET_VERSION 4.0 (its doc page says 6.2); either way it is there
    # at 6.2 and absent at 3.1
    expect_exit(qdml("validate", add, "--feature-level", "6.2"), 0)
    expect_one_error_line(qdml("validate", add, "--feature-level", "3.1"), add, "ELEMENT_WISE_QUANTIZED_LINEAR_ADD")
    # dequantize without a zero point: allowed from 6.2 only (docs/semantics.md section 3)
    case = {
        "operator": "ELEMENT_WISE_DEQUANTIZE_LINEAR",
        "tensors": {
            "InputTensor": {"type": "INT8", "sizes": [2], "values": [-3, 4]},
            "ScaleTensor": {"type": "FLOAT32", "sizes": [2], "strides": [0], "values": [0.5]},
            "OutputTensor": {"type": "FLOAT32", "sizes": [2]},
        },
    }
    c = write_case(tmp, case)
    expect_exit(qdml("validate", c, "--feature-level", "6.2"), 0)
    expect_one_error_line(qdml("run", c, "--feature-level", "6.1", "--out", os.path.join(tmp, "o.npy")), c)
    assert not os.path.exists(os.path.join(tmp, "o.npy"))
    check_output(run_and_read(c, tmp), "FLOAT32", [2], [-1.5, 2.0])


# ---------------------------------------------------------------------------
# Bad inputs: exit 2, one "qdml: " line on stderr, no --out file


def tensor(case, member):
    return case["tensors"][member]


def bad(fn):
    """Registers a bad-input test: fn(case, files) mutates the base matmul
    case and returns the strings the error line must mention (paths relative
    to the case directory are made absolute)."""
    def run(tmp):
        case, files = base_matmul()
        mentions = fn(case, files)
        text = case if isinstance(case, str) else json.dumps(case)
        if isinstance(mentions, tuple) and mentions and mentions[0] == "RAW":
            text, mentions = mentions[1], mentions[2:]
        c = write_case(tmp, text, files)
        mentions = [os.path.join(tmp, m) if m.endswith(".npy") else m for m in (mentions or ())]
        before = set(os.listdir(tmp))
        out = os.path.join(tmp, "out.npy")
        expect_one_error_line(qdml("run", c, "--out", out), *([c] if not any(m.endswith(".npy") for m in mentions)
                                                             else []), *mentions)
        assert set(os.listdir(tmp)) == before, "files created: %r" % sorted(set(os.listdir(tmp)) - before)
        expect_one_error_line(qdml("validate", c), *mentions)
        p = qdml("check", c)
        expect_exit(p, 1)
        assert count_lines(p.stdout)[1] == (0, 1, 0), describe(p)
    run.__name__ = "bad_input_" + fn.__name__
    TESTS.append(run)
    return fn


def bad_field(name, member, field, value, *mentions):
    """A bad input that sets one field of one tensor of the base case."""
    def fn(case, files):
        tensor(case, member)[field] = value
        return mentions
    fn.__name__ = name
    bad(fn)


U32_MAX = 4294967295
for args in [
    ("unknown_field_in_tensor", "ATensor", "shape", [2, 2], "ATensor", "shape"),
    ("data_on_output_tensor", "OutputTensor", "values", [0, 0, 0, 0], "OutputTensor", "values"),
    ("unknown_data_type", "BTensor", "type", "UINT4", "BTensor", "UINT4"),
    ("sizes_nine_entries", "BTensor", "sizes", [1, 1, 1, 1, 1, 1, 1, 2, 2], "BTensor", "sizes"),
    ("sizes_empty", "BTensor", "sizes", [], "BTensor", "sizes"),
    ("size_negative", "BTensor", "sizes", [-2, 2], "BTensor", "sizes"),
    ("size_not_integer", "BTensor", "sizes", [2.5, 2], "BTensor", "sizes"),
    ("sizes_product_overflows", "BTensor", "sizes", [U32_MAX] * 3, "BTensor"),
    ("output_sizes_product_overflows", "OutputTensor", "sizes", [U32_MAX] * 3, "OutputTensor"),
    # (2^32-1)^2 elements: 2^64 bytes, no runner can allocate it
    ("output_too_large", "OutputTensor", "sizes", [U32_MAX, U32_MAX], "OutputTensor"),
    ("strides_count_mismatch", "BTensor", "strides", [2, 1, 1], "BTensor", "strides"),
    ("values_wrong_count", "BTensor", "values", [1, 0, 0], "BTensor"),
    ("values_not_a_number", "BTensor", "values", [1, "zero", 0, 1], "BTensor"),
    ("values_null", "BTensor", "values", [1, None, 0, 1], "BTensor"),
    ("values_nan_for_integer", "BTensor", "values", [1, "NaN", 0, 1], "BTensor"),
    ("values_fraction_for_integer", "BTensor", "values", [1, 0.5, 0, 1], "BTensor"),
    ("value_out_of_range_uint8", "BTensor", "values", [300, 0, 0, 1], "BTensor"),
    ("value_negative_uint8", "BTensor", "values", [-1, 0, 0, 1], "BTensor"),
    ("values_not_an_array", "BTensor", "values", 1, "BTensor"),
    ("float_value_not_a_number", "BScaleTensor", "values", ["one"], "BScaleTensor"),
    ("both_data_and_values", "ATensor", "values", [1, 2, 3, 4], "ATensor"),
    # B is 2x2, so N is 2: a validation error from the library
    ("validation_error", "OutputTensor", "sizes", [2, 3], "QUANTIZED_LINEAR_MATRIX_MULTIPLY"),
]:
    bad_field(*args)


def bad_npy(name, fname, content):
    """A bad input that replaces one .npy file of the base case (a.npy holds
    the UINT8 {2,2} ATensor, s.npy the FLOAT32 {1,1} AScaleTensor)."""
    def fn(case, files):
        files[fname] = content
        return (fname,)
    fn.__name__ = name
    bad(fn)


GOOD_A = npy("UINT8", [2, 2], [1, 2, 3, 4])
for args in [
    ("npy_wrong_dtype", "a.npy", npy("INT8", [2, 2], [1, 2, 3, 4])),  # '|i1' for UINT8
    ("npy_float64_for_float32", "s.npy", npy_bytes("<f8", [1], struct.pack("<d", 1.0))),
    ("npy_wrong_element_count", "a.npy", npy("UINT8", [3], [1, 2, 3])),
    ("npy_truncated_data", "a.npy", npy_bytes("|u1", [2, 2], bytes([1, 2, 3]))),  # shape needs 4 bytes
    ("npy_trailing_data", "a.npy", npy_bytes("|u1", [2, 2], bytes([1, 2, 3, 4, 5]))),
    ("npy_truncated_header", "a.npy", GOOD_A[:40]),  # the header length says 118
    ("npy_only_magic", "a.npy", b"\x93NUMPY\x01"),
    ("npy_bad_magic", "a.npy", b"\x93NUMPZ" + GOOD_A[6:]),
    ("npy_unparsable_header", "a.npy",
     npy_bytes(None, None, bytes([1, 2, 3, 4]), header="{'descr': '|u1', 'fortran_order': Maybe, ")),
    ("npy_fortran_order", "a.npy", npy_bytes("|u1", [2, 2], bytes([1, 3, 2, 4]), fortran=True)),
    ("npy_big_endian_float", "s.npy", npy_bytes(">f4", [1], struct.pack(">f", 1.0))),
]:
    bad_npy(*args)


@bad
def malformed_json(case, files):
    return ("RAW", '{"operator": "QUANTIZED_LINEAR_MATRIX_MULTIPLY", "tensors": {', "case.json")


@bad
def duplicate_tensor_key(case, files):
    text = json.dumps(case).replace('"ATensor":', '"ATensor": {"type": "UINT8", "sizes": [2, 2], "values": [9, 9, 9, 9]}, "ATensor":', 1)
    return ("RAW", text, "ATensor", "twice")


@bad
def duplicate_top_level_key(case, files):
    return ("RAW", json.dumps(case)[:-1] + ', "params": {}}', "params", "twice")


@bad
def json_not_an_object(case, files):
    return ("RAW", "[1, 2, 3]", "case.json")


@bad
def json_empty_file(case, files):
    return ("RAW", "", "case.json")


@bad
def unknown_operator(case, files):
    case["operator"] = "QUANTIZED_LINEAR_MATRIX_MULTIPLY_TYPO"
    return ("QUANTIZED_LINEAR_MATRIX_MULTIPLY_TYPO",)


@bad
def missing_operator(case, files):
    del case["operator"]
    return ("operator",)


@bad
def unknown_tensor_member(case, files):
    case["tensors"]["CTensor"] = {"type": "UINT8", "sizes": [2, 2], "values": [1, 2, 3, 4]}
    return ("CTensor",)


@bad
def unknown_params_key(case, files):
    case["params"] = {"GroupCount": 1}  # a convolution parameter, not matmul's
    return ("GroupCount",)


@bad
def missing_required_tensor(case, files):
    del case["tensors"]["BTensor"]
    return ("BTensor",)


@bad
def missing_output_tensor(case, files):
    del case["tensors"]["OutputTensor"]
    return ("OutputTensor",)


@bad
def missing_data_file(case, files):
    del files["a.npy"]
    return ("a.npy",)


def replace_case(case, files, new):
    """Swaps the base case for another one (a bad test of another operator)."""
    case.clear()
    case.update(new[0])
    files.clear()
    files.update(new[1])


@bad
def npy_big_endian_int16(case, files):
    replace_case(case, files, base_clip("INT16", [1, 2, 3, 4], [4]))
    files["x.npy"] = npy_bytes(">i2", [4], struct.pack(">4h", 1, 2, 3, 4))
    return ("x.npy",)


@bad
def size_zero(case, files):
    tensor(case, "BTensor")["sizes"] = [0, 2]
    tensor(case, "BTensor")["values"] = []
    return ("BTensor", "sizes")


@bad
def strides_buffer_overflows(case, files):
    tensor(case, "BTensor")["strides"] = [4294967295, 4294967295]
    tensor(case, "BTensor")["sizes"] = [4294967295, 4294967295]
    return ("BTensor",)


@bad
def neither_data_nor_values(case, files):
    del tensor(case, "ATensor")["data"]
    return ("ATensor",)


@bad
def expected_wrong_dtype(case, files):
    files["e.npy"] = npy("INT8", [2, 2], [1, 2, 3, 4])
    case["expected"] = {"data": "e.npy", "tolerance": 0}
    return ("e.npy",)


@bad
def expected_wrong_count(case, files):
    files["e.npy"] = npy("UINT8", [5], [1, 2, 3, 4, 0])
    case["expected"] = {"data": "e.npy", "tolerance": 0}
    return ("e.npy",)


@bad
def expected_missing_file(case, files):
    case["expected"] = {"data": "e.npy", "tolerance": 0}
    return ("e.npy",)


@bad
def expected_negative_tolerance(case, files):
    files["e.npy"] = npy("UINT8", [2, 2], [1, 2, 3, 4])
    case["expected"] = {"data": "e.npy", "tolerance": -1}
    return ("tolerance",)


@bad
def clip_missing_max(case, files):
    c, f = base_clip("FLOAT32", [1.0], [1], data=False)
    del c["params"]["Max"]
    replace_case(case, files, (c, f))
    return ("Max",)


@bad
def clip_bad_scale_bias(case, files):
    c, f = base_clip("FLOAT32", [1.0], [1], data=False)
    c["params"]["ScaleBias"] = {"Scale": 2.0}
    replace_case(case, files, (c, f))
    return ("ScaleBias",)


@bad
def conv_params_wrong_length(case, files):
    replace_case(case, files, (load_json(os.path.join(CASES, "conv_padding_groups", "case.json")), {}))
    for t in case["tensors"].values():  # inline the data so the case stands alone
        t.pop("data", None)
    tensor(case, "InputTensor")["values"] = [6, 7, 8, 9, 4, 5, 5, 3, 10, 2, 8, 5]
    tensor(case, "FilterTensor")["values"] = [1, -1, 2, 0, 2, 0, -1, 3]
    del case["expected"]
    case["params"]["StartPadding"] = [1, 0, 0]
    return ("StartPadding",)


@test
def bad_nonexistent_case_path(tmp):
    c = os.path.join(tmp, "no_such_dir", "case.json")
    out = os.path.join(tmp, "out.npy")
    expect_one_error_line(qdml("run", c, "--out", out), c)
    expect_one_error_line(qdml("validate", c), c)
    assert os.listdir(tmp) == []


@test
def bad_case_is_a_directory(tmp):
    expect_one_error_line(qdml("run", tmp, "--out", os.path.join(tmp, "out.npy")))
    assert os.listdir(tmp) == []


@test
def bad_command_lines(tmp):
    c = os.path.join(CASES, "matmul_u8_per_column", "case.json")
    for args in ([], ["frobnicate"], ["run"], ["run", c, "--no-such-option"], ["validate"],
                 ["check"], ["run", c, "--feature-level", "9.9"], ["run", c, "--impl", "simd-that-does-not-exist"]):
        p = qdml(*args, cwd=tmp)
        try:
            expect_exit(p, 2)
            lines = p.stderr.splitlines()
            assert len(lines) == 1 and lines[0].startswith("qdml: "), describe(p)
        except AssertionError as e:
            raise AssertionError("qdml %s: %s" % (" ".join(args), e))
        assert os.listdir(tmp) == []


@test
def out_path_unwritable(tmp):
    c = os.path.join(CASES, "matmul_u8_per_column", "case.json")
    out = os.path.join(tmp, "no_such_dir", "out.npy")
    expect_one_error_line(qdml("run", c, "--out", out), "out.npy")
    assert os.listdir(tmp) == []


# ---------------------------------------------------------------------------


def main():
    if not os.access(QDML, os.X_OK):
        sys.exit("test_cli.py: %s is not an executable" % QDML)
    failed = []
    for t in TESTS:
        with tempfile.TemporaryDirectory(prefix="qdml_cli_") as tmp:
            try:
                t(tmp)
                print("ok    %s" % t.__name__)
            except Exception as e:  # AssertionError, subprocess.TimeoutExpired, ...
                failed.append(t.__name__)
                detail = str(e) if isinstance(e, AssertionError) else traceback.format_exc()
                print("FAIL  %s: %s" % (t.__name__, detail))
    print("test_cli: %d passed, %d failed%s" % (len(TESTS) - len(failed), len(failed),
                                                 (": " + ", ".join(failed)) if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
