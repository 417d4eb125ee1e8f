#!/usr/bin/env python3
"""Parse nccl-collbench output for the tests: the table strictly, line by
line, and the CSV with the csv module, then assert what a run must show.

Usage: parse_output.py check-sweep --table FILE [--csv FILE] --ranks N
           --sizes LIST [--collective LIST|all] [--dtypes LIST|all]
           [--redops LIST|all] [--roots N|all] [--passes N] [--wrong any|0]
           [--unavailable LIST] [--group-sizes N,N,...] [--layout row|col|row,col]
           [--a2av-matrix SPEC]
       parse_output.py check-csv-header --csv FILE
       parse_output.py check-wrong --table FILE --collective LIST [--clean LIST]
       parse_output.py check-json-values --json FILE

Sizes are the requested ones; the expected size and count columns follow
each collective's layout (whole elements for every rank).
"""
import argparse
import csv
import json
import math
import re
import sys

CSV_V1_COLUMNS = [
    "schema_version", "run_id", "start_utc", "tool_version", "backend", "library",
    "mpi_library", "device", "ranks", "nodes", "ranks_per_node", "collective", "datatype",
    "redop", "root", "bytes", "count", "placement", "warmup_iters", "iters", "time_us",
    "time_combine", "algbw_gbps", "busbw_gbps", "wrong", "check_passes",
    "agg", "graph_launches", "blocking", "time_kind", "iter_samples", "iter_min_us",
    "iter_median_us", "iter_p99_us", "iter_max_us", "rank_time_min_us", "rank_time_mean_us",
    "rank_time_max_us", "slowest_rank", "slowest_host", "group",
    "layout", "matrix_rows", "matrix_cols", "group_ranks", "scan_part", "host", "peer_host",
    "round", "cycle", "timestamp_utc", "traffic_matrix", "impl", "unalign", "comm_op",
    "rank_time_median_us", "expected_busbw_gbps", "efficiency", "group_host", "allocator",
    "registration", "repeat_checked", "unrepeatable", "unrepeatable_elements",
    "unrepeatable_rank", "unrepeatable_host", "clock", "blocking_mode", "rotate",
    "restart_count",
]

DTYPE_SIZES = {"int8": 1, "uint8": 1, "int32": 4, "uint32": 4, "int64": 8,
               "uint64": 8, "float": 4, "double": 8, "half": 2, "bfloat16": 2,
               "fp8_e4m3": 1, "fp8_e5m2": 1}
# In the order -d all and --redop all run them.
ALL_DTYPES = list(DTYPE_SIZES)
ALL_REDOPS = ["sum", "prod", "min", "max", "avg", "premulsum"]
# Collectives in the order -o all runs them: (reduces, rooted, per_rank_blocks).
# per_rank_blocks: the size column is n blocks of count elements.
COLLECTIVES = {
    "allreduce": (True, False, False),
    "allgather": (False, False, True),
    "reducescatter": (True, False, True),
    "broadcast": (False, True, False),
    "reduce": (True, True, False),
    "alltoall": (False, False, True),
    "alltoallv": (False, False, True),
    "gather": (False, True, True),
    "scatter": (False, True, True),
    "sendrecv": (False, False, False),
    "ring_allreduce": (True, False, False),
    "hier_allreduce": (True, False, False),
    "barrier": (False, False, False),
}
# Collectives with a column layout (--layout col); the others run in rows.
COLUMN_LAYOUT = {"allgather", "reducescatter", "alltoall", "gather"}
# Reductions a collective skips with a note: hier_allreduce cannot average.
SKIPPED_REDOPS = {"hier_allreduce": {"avg"}}
# Collectives that move no data: one out-of-place row at size 0 for the
# first type, never checked, left out of the average bus bandwidth.
NO_DATA = {"barrier"}
# Collectives measured out of place only (no in-place form).
OUT_OF_PLACE = {"alltoallv"}


def busbw_factor(collective, n):
    if collective in ("allreduce", "ring_allreduce", "hier_allreduce"):
        return 2.0 * (n - 1) / n
    if collective in NO_DATA:
        return 0.0
    if collective in ("allgather", "reducescatter", "alltoall", "alltoallv", "gather",
                      "scatter", "hypercube"):
        return (n - 1) / n
    if collective in ("broadcast", "reduce", "sendrecv"):
        return 1.0
    raise AssertionError("no factor known for " + collective)


M64 = (1 << 64) - 1


def mix64(x):
    """splitmix64's finaliser, as src/traffic.c mixes a random matrix's seed."""
    x = (x + 0x9E3779B97F4A7C15) & M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def traffic_weight(spec, n, i, j):
    """The weight of alltoallv's cell i -> j for --a2av-matrix spec."""
    kind, *args = spec.split(":")
    if kind == "random":
        seed = int(args[0]) if args else 0
        return mix64(mix64(seed) ^ (i * n + j)) % 16
    if kind == "hot":
        hot = int(args[1]) if len(args) > 1 else 1
        return int(args[0]) if j < hot else 1
    return 1


def canonical_matrix(spec):
    """--a2av-matrix as the CSV writes it: every field written out."""
    kind, *args = spec.split(":")
    if kind == "random":
        return "random:%d" % (int(args[0]) if args else 0)
    if kind == "hot":
        return "hot:%d:%d" % (int(args[0]), int(args[1]) if len(args) > 1 else 1)
    return spec


def alltoallv_layout(spec, size, esize, n):
    """(size column, count column): the busiest rank's bytes and the unit."""
    peak = max(max(sum(traffic_weight(spec, n, r, j) for j in range(n)),
                   sum(traffic_weight(spec, n, j, r) for j in range(n))) for r in range(n))
    unit = size // esize // peak if peak else 0
    return (peak * unit * esize, unit) if unit else None


def layout(collective, size, esize, n, matrix="uniform"):
    """(size column, count column) for a requested size, or None when the
    size holds no whole element for every rank (the run skips it)."""
    if collective == "alltoallv":
        return alltoallv_layout(matrix, size, esize, n)
    if COLLECTIVES[collective][2]:
        count = size // esize // n
        return (n * count * esize, count) if count else None
    count = size // esize
    return (count * esize, count) if count else None


class Failure(Exception):
    pass


def ensure(cond, msg):
    if not cond:
        raise Failure(msg)


def parse_table(path):
    """Return dict(preamble, tables, wrong_lines, footer, notes)."""
    out = {"preamble": [], "tables": [], "wrong_lines": [], "footer": {}, "notes": [],
           "devices": []}
    current = None
    # Every data row has nccl-tests' 13 fields, then with --split the
    # group and its host ("-" on several hosts); in column layout the row's
    # matrix is on the comment line under it.
    row_re = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(-?\d+)" + r"\s+(\S+)" * 8 +
                        r"(?:\s+(\d+)  (\S+))?$")
    extras_re = re.compile(r"^#   matrix (\d+) x (\d+)$")
    last_row = None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            ensure(line == line.rstrip(), "trailing blanks in %r" % line)
            if not line.startswith("#"):
                m = row_re.match(line)
                ensure(m is not None and len(line.split()) == (13 if m.group(14) is None else 15),
                       "table row does not have 13 fields (15 with --split): %r" % line)
                ensure(current is not None, "row before any collective header: %r" % line)
                g = m.groups()

                def half(k):
                    if g[k:k + 4] == ("N/A",) * 4:
                        return None   # not measured (barrier's in-place half)
                    wrong = g[k + 3]
                    return {"time_us": float(g[k]), "algbw": float(g[k + 1]),
                            "busbw": float(g[k + 2]),
                            "wrong": None if wrong == "N/A" else int(wrong)}
                last_row = {"size": int(g[0]), "count": int(g[1]), "type": g[2],
                            "redop": g[3], "root": int(g[4]),
                            "oop": half(5), "ip": half(9),
                            "group": None if g[13] is None else int(g[13]),
                            "host": None if g[14] is None else g[14], "matrix": None}
                current["rows"].append(last_row)
                continue
            m = extras_re.match(line)
            if m is not None and last_row is not None:
                ensure(last_row["matrix"] is None, "two matrix lines for one row: %r" % line)
                last_row["matrix"] = (int(m.group(1)), int(m.group(2)))
                continue
            text = line[1:].strip()
            if text.startswith("Collective:"):
                name = text.split(":", 1)[1].strip()
                layout_kind = "row"
                if ", column layout " in name:
                    name, layout_kind = name.split(",", 1)[0], "col"
                current = {"collective": name, "layout": layout_kind, "rows": []}
                out["tables"].append(current)
            elif text.startswith("WRONG:"):
                out["wrong_lines"].append(text)
            elif text.startswith("Out of bounds values"):
                m = re.match(r"Out of bounds values\s*:\s*(\d+)\s+(OK|FAILED)$", text)
                ensure(m is not None, "bad footer line %r" % line)
                out["footer"]["oob"] = int(m.group(1))
                out["footer"]["status"] = m.group(2)
            elif text.startswith("Avg bus bandwidth"):
                # One line for one collective, one per collective for several:
                # "Avg bus bandwidth (allreduce) : 1.5", then OK or FAILED
                # under NCCL_TESTS_MIN_BW.
                m = re.match(r"Avg bus bandwidth(?: \((\S+)\))?\s*: (\S+)(?: (OK|FAILED))?$", text)
                ensure(m is not None, "bad average line %r" % line)
                out["footer"].setdefault("averages", {})[m.group(1)] = float(m.group(2))
                out["footer"].setdefault("min_bw", {})[m.group(1)] = m.group(3)
            elif text.startswith("Result:"):
                m = re.match(r"Result: (PASS|FAIL|UNCHECKED)(?: \((.+)\))? (\d+) measurements? in "
                             r"\d+\.\d s$", text)
                ensure(m is not None, "bad Result line %r" % line)
                out["footer"]["result"] = m.group(1)
                out["footer"]["reasons"] = m.group(2)
                out["footer"]["measurements"] = int(m.group(3))
            elif text.startswith("Rank "):
                out["devices"].append(text)
            elif current is None:
                out["preamble"].append(text)
            else:
                out["notes"].append(text)
    return out


def read_csv(path):
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        rows = [dict(zip(header, r)) for r in reader]
        for r in rows:
            ensure(len(r) == len(header), "short CSV row %r" % r)
    return header, rows


def check_csv_header(args):
    header, _ = read_csv(args.csv)
    ensure(header == CSV_V1_COLUMNS, "CSV header differs from schema v1: %r" % header)


def close(a, b, rel=2e-3, abs_=2e-6):
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)


def expand(text, everything):
    return list(everything) if text == "all" else text.split(",")


def column_shape(count, n):
    """(rows, cols) of the column layout's matrix for a block of count."""
    rows = max(r for r in range(1, int(math.isqrt(count)) + 1) if count % r == 0)
    return rows, n * (count // rows)


def expected_tables(args, collectives):
    """(collective, layout) of every table, in order."""
    layouts = args.layout.split(",")
    tables = []
    for c in collectives:
        done_rows = False
        for lay in layouts:
            if lay == "col" and c not in COLUMN_LAYOUT:
                lay = "row"
            if lay == "row":
                if done_rows:
                    continue
                done_rows = True
            tables.append((c, lay))
    return tables


def expected_rows(args, collective):
    """(type, redop, root, size, count) in the order the run prints them."""
    n = args.ranks
    reduces, rooted, _ = COLLECTIVES[collective]
    groups = [int(x) for x in args.group_sizes.split(",")] if args.group_sizes else [n]
    if collective in NO_DATA:
        return [(expand(args.dtypes, ALL_DTYPES)[0], "none", -1, 0, 0, g)
                for g in range(len(groups))]
    n = min(groups)
    redops = expand(args.redops, ALL_REDOPS) if reduces else ["none"]
    redops = [r for r in redops if r not in SKIPPED_REDOPS.get(collective, ())]
    if not rooted:
        roots = [-1]
    elif args.roots == "all":
        roots = list(range(n))
    else:
        roots = [int(args.roots)]
    rows = []
    for d in expand(args.dtypes, ALL_DTYPES):
        for r in redops:
            for root in roots:
                for s in [int(x) for x in args.sizes.split(",")]:
                    # --split: a size every group can take, one row per group.
                    lays = [layout(collective, s, DTYPE_SIZES[d], gn, args.a2av_matrix)
                            for gn in groups]
                    if None not in lays:
                        rows += [(d, r, root, lay[0], lay[1], g) for g, lay in enumerate(lays)]
    return rows


def check_sweep(args):
    n = args.ranks
    collectives = expand(args.collective, COLLECTIVES)
    t = parse_table(args.table)
    ensure(len(t["devices"]) == n, "expected %d Using devices lines, got %d" % (n, len(t["devices"])))
    ensure(any("ranks: %d" % n in p for p in t["preamble"]), "preamble lacks 'ranks: %d'" % n)
    tables = expected_tables(args, collectives)
    ensure([(x["collective"], x["layout"]) for x in t["tables"]] == tables,
           "tables: %r, expected %r" % ([(x["collective"], x["layout"]) for x in t["tables"]],
                                        tables))
    busbw_cells = {}
    all_rows = []
    unavailable = args.unavailable.split(",") if args.unavailable else []
    for table, (collective, lay) in zip(t["tables"], tables):
        rows = table["rows"]
        expected = [] if collective in unavailable else expected_rows(args, collective)
        if collective in unavailable:
            ensure(any(x.startswith("skipped %s on the " % collective) for x in t["notes"]),
                   "no note says why %s was skipped" % collective)
        got = [(x["type"], x["redop"], x["root"], x["size"], x["count"],
                0 if x["group"] is None else x["group"]) for x in rows]
        ensure(not rows or all(x["group"] is None for x in rows) != bool(args.group_sizes),
               "a group column only with --split: %r" % rows[:1])
        ensure(got == expected, "%s rows %r, expected %r" % (collective, got, expected))
        for x in rows:
            if collective in NO_DATA:
                ensure(x["ip"] is None and x["oop"]["wrong"] is None and x["oop"]["busbw"] == 0,
                       "%s is measured out of place only, unchecked, without bandwidth: %r"
                       % (collective, x))
                ensure(x["oop"]["time_us"] > 0, "non-positive time in %r" % x)
                all_rows.append((collective, x, lay))
                continue
            if lay == "col":
                # Out of place only, with the matrix each rank's block is a
                # column slice of.
                gn = ([int(v) for v in args.group_sizes.split(",")] if args.group_sizes
                      else [n])[x["group"] or 0]
                ensure(x["ip"] is None, "column layout has no in-place half: %r" % x)
                ensure(x["matrix"] == column_shape(x["count"], gn),
                       "matrix %r, expected %r for count %d" %
                       (x["matrix"], column_shape(x["count"], gn), x["count"]))
            else:
                ensure(x["matrix"] is None, "a matrix column in row layout: %r" % x)
            if collective in OUT_OF_PLACE:
                ensure(x["ip"] is None, "%s has no in-place half: %r" % (collective, x))
            both = lay == "row" and collective not in OUT_OF_PLACE
            for half in (x["oop"], x["ip"]) if both else (x["oop"],):
                ensure(half is not None, "missing in-place or out-of-place half in %r" % x)
                ensure(half["time_us"] > 0, "non-positive time in %r" % x)
                if args.wrong == "0":
                    ensure(half["wrong"] == 0, "wrong elements in %s %r" % (collective, x))
                if args.passes == 0:
                    ensure(half["wrong"] is None, "#wrong should be N/A in %r" % x)
                busbw_cells.setdefault(collective, []).append(half["busbw"])
            all_rows.append((collective, x, lay))
    ensure("status" in t["footer"], "no footer")
    if args.wrong == "0":
        ensure(t["footer"]["status"] == "OK" and t["footer"]["oob"] == 0, "footer %r" % t["footer"])
        ensure(not t["wrong_lines"], "WRONG lines: %r" % t["wrong_lines"][:3])
    # The average of like with like: one line without a name for one
    # collective, a line per collective for several, none without data.
    averages = t["footer"].get("averages", {})
    want = {c: sum(v) / len(v) for c, v in busbw_cells.items()}
    if len(want) == 1:
        want = {None: list(want.values())[0]}
    ensure(set(averages) == set(want), "average lines for %r, expected %r" %
           (sorted(averages, key=str), sorted(want, key=str)))
    for c, avg in want.items():
        ensure(close(averages[c], avg, rel=0.05, abs_=0.01),
               "Avg bus bandwidth %r of %s is not the mean of its busbw cells %r" %
               (averages[c], c, avg))
    ensure("result" in t["footer"], "no Result line")
    measured = sum(1 + (x["ip"] is not None) for table in t["tables"] for x in table["rows"])
    ensure(t["footer"]["measurements"] == measured, "Result counts %d measurements, the table "
           "has %d" % (t["footer"]["measurements"], measured))
    if args.wrong == "0":
        ensure(t["footer"]["result"] == "PASS", "Result %r" % t["footer"])
    if not args.csv:
        return
    header, crow = read_csv(args.csv)
    ensure(header == CSV_V1_COLUMNS, "CSV header differs from schema v1: %r" % header)
    # Each table row is two CSV rows, out of place then in place, except
    # for the one out-of-place row of a collective that moves no data.
    halves = []
    for collective, tr, lay in all_rows:
        halves.append((collective, tr, 0, lay))
        if collective not in NO_DATA and collective not in OUT_OF_PLACE and lay == "row":
            halves.append((collective, tr, 1, lay))
    ensure(len(crow) == len(halves), "CSV has %d rows, expected %d" % (len(crow), len(halves)))
    run_ids = {r["run_id"] for r in crow}
    ensure(len(run_ids) == 1 and re.match(r"^[0-9a-f]{16}$", run_ids.pop()), "run_id")
    group_sizes = [int(x) for x in args.group_sizes.split(",")] if args.group_sizes else [n]
    for r, (collective, tr, in_place, lay) in zip(crow, halves):
        ensure(r["layout"] == lay, "CSV layout %r, table %r" % (r["layout"], lay))
        ensure(r["traffic_matrix"] == (canonical_matrix(args.a2av_matrix)
                                       if collective == "alltoallv" else ""),
               "CSV traffic_matrix %r for %s" % (r["traffic_matrix"], collective))
        ensure((r["matrix_rows"], r["matrix_cols"]) ==
               (("", "") if tr["matrix"] is None else tuple(str(v) for v in tr["matrix"])),
               "CSV matrix %r, table %r" % ((r["matrix_rows"], r["matrix_cols"]), tr["matrix"]))
        factor = busbw_factor(collective, group_sizes[tr["group"] or 0])
        ensure(r["group"] == ("" if tr["group"] is None else str(tr["group"])),
               "CSV group %r, table group %r" % (r["group"], tr["group"]))
        ensure(r["group_host"] == ("" if tr["host"] in (None, "-") else tr["host"]),
               "CSV group_host %r, table host %r" % (r["group_host"], tr["host"]))
        # The ranks busbw was computed for: the group's under --split.
        ensure(r["group_ranks"] == str(group_sizes[tr["group"] or 0]),
               "CSV group_ranks %r, expected %d" % (r["group_ranks"], group_sizes[tr["group"] or 0]))
        ensure(r["schema_version"] == "1", "schema_version %r" % r["schema_version"])
        ensure(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", r["start_utc"]), "start_utc")
        ensure(r["placement"] == ("out-of-place", "in-place")[in_place], "placement order %r" % r)
        ensure(int(r["ranks"]) == n and int(r["nodes"]) >= 1, "ranks/nodes %r" % r)
        ensure((r["collective"], r["datatype"], r["redop"], int(r["root"]), int(r["bytes"]),
                int(r["count"])) ==
               (collective, tr["type"], tr["redop"], tr["root"], tr["size"], tr["count"]),
               "CSV row %r does not match table row %r" % (r, tr))
        time_us = float(r["time_us"])
        algbw = float(r["algbw_gbps"])
        busbw = float(r["busbw_gbps"])
        ensure(time_us > 0, "time")
        if collective in NO_DATA:
            ensure(algbw == 0 and busbw == 0 and r["wrong"] == "" and r["check_passes"] == "0",
                   "%s CSV row %r" % (collective, r))
            continue
        ensure(close(algbw, int(r["bytes"]) / 1e9 / (time_us * 1e-6), rel=5e-3, abs_=1e-5),
               "algbw %r is not bytes/time in %r" % (algbw, r))
        ensure(close(busbw, algbw * factor, abs_=2e-6), "busbw %r != algbw*%g in %r" % (busbw, factor, r))
        half = tr["ip"] if in_place else tr["oop"]
        ensure(close(half["time_us"], time_us, rel=1e-3, abs_=0.006), "table/CSV time differ: %r %r" % (half, r))
        ensure(int(r["check_passes"]) == args.passes, "check_passes %r" % r["check_passes"])
        if args.passes == 0:
            ensure(r["wrong"] == "", "wrong must be empty when unchecked")
        elif args.wrong == "0":
            ensure(r["wrong"] == "0", "wrong %r" % r["wrong"])
        ensure(int(r["iters"]) > 0 and int(r["warmup_iters"]) >= 0, "iters")
        ensure(r["backend"] != "" and r["device"] != "", "backend/device empty")


def check_wrong(args):
    """A run with a fault: every named collective has at least one WRONG line
    and a non-zero #wrong cell; the footer fails."""
    t = parse_table(args.table)
    ensure(t["footer"].get("status") == "FAILED", "footer %r" % t["footer"])
    for collective in args.collective.split(","):
        lines = [w for w in t["wrong_lines"] if w.split()[1] == collective]
        ensure(lines, "no WRONG line for %s" % collective)
        for w in lines:
            ensure(re.match(r"^WRONG: \S+ \S+ \S+ root -?\d+, \d+ B (out-of-place|in-place): "
                            r"\d+ wrong; first at rank \d+ \(.+\) element \d+: "
                            r"expected \S+, got \S+$", w), "malformed WRONG line %r" % w)
        table = [x for x in t["tables"] if x["collective"] == collective]
        ensure(table and any((x["oop"]["wrong"] or 0) + ((x["ip"] or {}).get("wrong") or 0) > 0
                             for x in table[0]["rows"]),
               "no non-zero #wrong cell for %s" % collective)
    for collective in (args.clean.split(",") if args.clean else []):
        ensure(not [w for w in t["wrong_lines"] if w.split()[1] == collective],
               "unexpected WRONG line for %s" % collective)


def check_json_values(args):
    """Every value of a --json document, on any backend: unknown is null,
    never "" (environment values are the user's own), and measured floats
    carry at most 6 significant digits, not binary noise like 4.90219999999958."""
    floats = []
    with open(args.json) as f:
        doc = json.load(f, parse_float=lambda text: floats.append(text) or float(text))

    def empty(x, path):
        if isinstance(x, dict):
            return [p for k, v in x.items() if path + k != ".environment"
                    for p in empty(v, path + k + ".")]
        if isinstance(x, list):
            return [p for v in x for p in empty(v, path)]
        return [path] if x == "" else []
    ensure(not empty(doc, "."), "keys holding \"\": %r" % empty(doc, ".")[:5])
    ensure(floats, "no floats at all")
    digits = [t for t in floats if len(re.sub(r"[^0-9]", "", t.split("e")[0].split("E")[0])
                                        .lstrip("0")) > 6]
    ensure(not digits, "floats with more than 6 significant digits: %r" % digits[:5])


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("check-sweep")
    s.add_argument("--table", required=True)
    s.add_argument("--csv")
    s.add_argument("--ranks", type=int, required=True)
    s.add_argument("--sizes", required=True)
    s.add_argument("--collective", default="allreduce")
    s.add_argument("--dtypes", default="float")
    s.add_argument("--redops", default="sum")
    s.add_argument("--roots", default="0")
    s.add_argument("--passes", type=int, default=1)
    s.add_argument("--wrong", default="0")
    s.add_argument("--layout", default="row")
    s.add_argument("--a2av-matrix", default="uniform",
                   help="alltoallv's --a2av-matrix, for its expected sizes")
    s.add_argument("--group-sizes", default="",
                   help="--split: the rank count of each group, in group order")
    s.add_argument("--unavailable", default="",
                   help="collectives the backend cannot run: a note, no rows")
    h = sub.add_parser("check-csv-header")
    h.add_argument("--csv", required=True)
    w = sub.add_parser("check-wrong")
    w.add_argument("--table", required=True)
    w.add_argument("--collective", required=True)
    w.add_argument("--clean", default="")
    j = sub.add_parser("check-json-values")
    j.add_argument("--json", required=True)
    args = ap.parse_args()
    try:
        {"check-sweep": check_sweep, "check-csv-header": check_csv_header,
         "check-wrong": check_wrong, "check-json-values": check_json_values}[args.cmd](args)
    except Failure as e:
        print("parse_output: " + str(e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
