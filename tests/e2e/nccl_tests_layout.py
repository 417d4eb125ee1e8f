"""Compare every line of a run under an nccl-tests name with nccl-tests
2.19.6's own format strings, byte for byte.

Usage: nccl_tests_layout.py OUTPUT PROGRAM SIZES COUNT_DIV REDOPS [FLAGS [MIN,MAX]]

The format strings below are copied from nccl-tests' src/util.cu, the
functions that print around and in the table: writeDeviceReport (the
starting, parameter and device lines), writeResultHeader (the titles),
writeBenchmarkLinePreamble, writeBenchmarkLineBody, writePerIterReport and
writeTimestamp (the rows), writeResultFooter, finalizeFooter and writeErrors
(the footer), as src/common.cu's run() and TimeTest() call them. Literal
arguments are formatted with Python's printf-style %, which pads as C's
does; a measured number is masked by a pattern whose field must fill the
conversion's width exactly (or overflow it without padding, as printf
does). Our version line stands in the place of theirs and must name us; our
own lines (backend, notes, verdict) come only after their last line.
REDOPS: the redop column, a comma list for a set of rows per reduction
(sendrecv_perf -o all, as sendrecv.cu loops); "" for hypercube_perf.
FLAGS: any of C (-C 1), I (-I 1), S (-S 1), M (-M 1: writeMemInfo's line
after "# Collective test concluded"), G (NCCL_TESTS_SPLIT="OR 1": every
rank's Group is its colour, 1), D (NCCL_TESTS_SPLIT="MOD 2": rank r's Group
is r % 2, and two groups still print one row per size, as theirs), H (hypercube.cu's HyperCubeGetBw: algbw
equal to busbw). MIN,MAX: the parameter line's minBytes and maxBytes where
they are not the first and last row's size (hypercube's rounding).
"""
import re
import sys

# A measured value: its pattern (no blanks inside).
class Num:
    def __init__(self, pattern):
        self.pattern = pattern


SQUEEZED = Num(r"(?:\d+\.\d\d|\d+\.\d|\d+|\d\.\de[+-]\d+|\d+e[+-]\d+)")  # getFloatStr
GNUM = Num(r"[0-9.e+-]+")
INT = Num(r"-?\d+")
HEX = Num(r"[0-9a-f]+")
WORD = Num(r"\S+")
TEXT = Num(r".+")
STAMP = Num(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")   # "%Y-%m-%d %H:%M:%S"
MEM = r"-?\d+(?:\.\d\d?)? [KMG]?B"                  # getMemString
MEMINFO = Num("Initialization %s \\| User-Allocated %s \\| Collective %s \\| Total  %s"
              % ((MEM,) * 4))                      # writeMemInfo

CONV = re.compile(r"%(-?)(\*|\d*)(?:\.\d+)?l?([disfgx%])")


def pattern(fmt, *args):
    """A regex for fmt, and the widths its masked groups must fill."""
    out, widths, args = [], [], list(args)
    pos = 0
    for m in CONV.finditer(fmt):
        out.append(re.escape(fmt[pos:m.start()]))
        pos = m.end()
        if m.group(3) == "%":
            out.append("%")
            continue
        width = m.group(2)
        if width == "*":
            width = args.pop(0)
            spec = "%" + m.group(1) + str(width) + m.group(3)
        else:
            spec = m.group(0).replace("l", "")
        width = int(width) if width else 0
        value = args.pop(0)
        if isinstance(value, Num):
            left = m.group(1) == "-"
            out.append("((?:%s) *)" % value.pattern if left else "( *(?:%s))" % value.pattern)
            widths.append(width)
        else:
            out.append(re.escape(spec % value))
    assert not args, (fmt, args)
    out.append(re.escape(fmt[pos:]))
    return "".join(out), widths


def matches(line, pat):
    regex, widths = pat
    m = re.fullmatch(regex, line)
    if not m:
        return False
    for group, width in zip(m.groups(), widths):
        exact = len(group) == width
        overflow = len(group) > width and not group.startswith(" ")
        if width and not (exact or overflow):
            return False
    return True


def literal(fmt, *args):
    return pattern(fmt, *args)


def expected(program, sizes, count_div, redops, flags, nranks, bounds):
    per_iter, stamps = "I" in flags, "S" in flags
    time = "cputime" if "C" in flags else "time"
    ts_pad, ts_label, ts_fmt = (19, "timestamp", "%Y-%m-%d %H:%M:%S") if stamps else (0, "", "")
    lines = [
        # writeDeviceReport
        literal("# Collective test starting: %s\n", program),
        literal("# nThread %d nGpus %d minBytes %ld maxBytes %ld step: %ld(%s) warmup iters: %d "
                "iters: %d agg iters: %d validation: %d graph: %d unalign: %d\n",
                1, 1, bounds[0], bounds[-1], 2, "factor", 1, 5, 1, 1, 0, 0),
    ]
    if per_iter:
        lines.append(literal("# Per-Iteration Report: CUDA event timing; i_* uses max over "
                             "process rows" + " \n"))
    lines += [literal("#\n"), literal("# Using devices\n")]
    for r in range(nranks):
        lines.append(pattern("#  Rank %2d Group %2d Pid %6d on %10s device %2d "
                             "[%04x:%02x:%02x] %s\n",
                             r, r % 2 if "D" in flags else 1 if "G" in flags else 0, INT,
                             WORD, INT, HEX, HEX, HEX, TEXT))
    # writeResultHeader
    lines.append(literal("#\n"))
    if per_iter:
        lines.append(literal("# %10s  %12s  %8s  %6s  %6s              out-of-place (+ per-iteration)"
                             "                                in-place (+ per-iteration)\n",
                             "", "", "", "", ""))
        lines.append(literal("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s  "
                             "%7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s %*s\n",
                             "size", "count", "type", "redop", "root", time, "algbw", "busbw",
                             "#wrong", "i_min", "i_max", "i_p99", "i_cv%", time, "algbw",
                             "busbw", "#wrong", "i_min", "i_max", "i_p99", "i_cv%",
                             ts_pad, ts_label))
        lines.append(literal("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s  "
                             "%7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s %*s\n",
                             "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "",
                             "(us)", "(us)", "(us)", "(%)", "(us)", "(GB/s)", "(GB/s)", "",
                             "(us)", "(us)", "(us)", "(%)", ts_pad, ts_fmt))
    else:
        lines.append(literal("# %10s  %12s  %8s  %6s  %6s           out-of-place                "
                             "       in-place          \n", "", "", "", "", ""))
        lines.append(literal("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  "
                             "%6s %*s\n", "size", "count", "type", "redop", "root", time,
                             "algbw", "busbw", "#wrong", time, "algbw", "busbw", "#wrong",
                             ts_pad, ts_label))
        lines.append(literal("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  "
                             "%6s %*s\n", "(B)", "(elements)", "", "", "", "(us)", "(GB/s)",
                             "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "", ts_pad, ts_fmt))
    # TimeTest: one row per size; sendrecv's run per reduction, in -o's order.
    for redop, size in [(op, size) for op in redops for size in sizes]:
        fmt = "%12li  %12li  %8s  %6s  %6s"
        args = [size, size // 4 // count_div, "float", redop, "%6i" % -1]
        for _ in range(2):
            fmt += "  %7s  %6s  %6s  %6g"
            args += [SQUEEZED, SQUEEZED, SQUEEZED, 0]
            if per_iter:
                fmt += "  %7s  %7s  %7s  %7s"
                args += [SQUEEZED] * 4
        if stamps:
            fmt += "%21s"
            args += [STAMP]
        lines.append(pattern(fmt + "\n", *args))
    # writeResultFooter, finalizeFooter, writeErrors
    lines += [
        literal("# %-20s : %d %s\n", "Out of bounds values", 0, "OK"),
        pattern("# %-20s : %g %s\n", "Avg bus bandwidth", GNUM, ""),
        literal("#\n"),
        literal("# Collective test concluded: %s\n", program),
    ]
    if "M" in flags:   # run(), common.cu: writeMemInfo before finalizeFooter
        lines.append(pattern("# %-20s : %s\n", "GPU memory usage", MEMINFO))
    lines += [literal("#\n"), literal("\n")]
    return lines


def check_mem_precision(line):
    """getMemString's decimals: 2 below 10, 1 below 100, none above."""
    for value in re.findall(r"(-?[\d.]+) [KMG]?B", line):
        number = abs(float(value))
        decimals = len(value.split(".")[1]) if "." in value else 0
        want = 2 if number < 10 else 1 if number < 100 else 0
        assert decimals == want, "memory figure %s: %d decimals, getMemString gives %d" % (
            value, decimals, want)


def check_hypercube_bw(line):
    """HyperCubeGetBw: algbw is busbw, in both halves."""
    cells = line.split()[-8:]
    assert cells[1] == cells[2] and cells[5] == cells[6], \
        "hypercube's algbw is not its busbw: %r" % line


def main():
    path, program, sizes, count_div, redops = sys.argv[1:6]
    flags = sys.argv[6] if len(sys.argv) > 6 else ""
    sizes = [int(s) for s in sizes.split(",")]
    bounds = [int(s) for s in sys.argv[7].split(",")] if len(sys.argv) > 7 else sizes
    text = open(path).read()
    got = text.splitlines(keepends=True)
    nranks = sum(1 for l in got if l.startswith("#  Rank "))
    want = expected(program, sizes, int(count_div), redops.split(","), flags, nranks, bounds)
    # Our version line, in place of "# nccl-tests version ...".
    assert got and got[0].startswith("# nccl-collbench ") and "nccl-tests" not in got[0], \
        "line 1 is not our version line: %r" % got[:1]
    for i, pat in enumerate(want, start=2):
        assert i - 1 < len(got), "output ends before line %d (%s)" % (i, pat[0])
        line = got[i - 1]
        assert matches(line, pat), "line %d:\n got  %r\n want %s" % (i, line, pat[0])
        if line.startswith("# GPU memory usage"):
            check_mem_precision(line)
        if "H" in flags and line.strip() and not line.startswith("#"):
            check_hypercube_bw(line)
    # Ours after theirs: comment lines only, the verdict last.
    rest = got[len(want) + 1:]
    assert all(l.startswith("#") for l in rest), "not a comment after their block: %r" % rest
    assert rest and rest[-1].startswith("# Result: PASS"), "no verdict at the end: %r" % rest[-1:]


if __name__ == "__main__":
    main()
