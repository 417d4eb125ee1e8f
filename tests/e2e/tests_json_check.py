#!/usr/bin/env python3
"""Check a -J document against nccl-tests' JSON schema (version 3).

Every field nccl-tests' tools/analyze_perf_json.py reads (its overview,
--all, --straggler, --spikes, --iter0 and --nodes) must be there with the
type it uses, and so must the rest of the schema the issue lists. Written
from the schema, not from their script.

Usage: tests_json_check.py FILE --ranks N [--per-iter SKIP] [--table OUT]
  --per-iter SKIP  the run had -I 1 -K SKIP: per-iteration objects required
  --table OUT      the run's table on stdout: the rows must match the results
"""
import argparse
import json
import sys


class Bad(Exception):
    pass


def need(obj, key, types, where):
    if not isinstance(obj, dict) or key not in obj:
        raise Bad(f"{where}: no '{key}'")
    value = obj[key]
    # bool is an int in Python: never accept it where a number is meant.
    if isinstance(value, bool) or not isinstance(value, types):
        raise Bad(f"{where}.{key}: {type(value).__name__} {value!r}, "
                  f"not {types}")
    return value


NUMBER = (int, float)


def numbers(values, where):
    if not isinstance(values, list) or not values:
        raise Bad(f"{where}: not a non-empty list")
    for v in values:
        if isinstance(v, bool) or not isinstance(v, NUMBER):
            raise Bad(f"{where}: holds {v!r}")


def their_bool(obj, key, where):
    value = need(obj, key, str, where)
    if value not in ("true", "false"):
        raise Bad(f"{where}.{key}: {value!r} is not their 'true' or 'false'")


def check_half(half, where):
    # With -C 1 the time is under cpu_time, as theirs.
    if "time" not in half:
        need(half, "cpu_time", NUMBER, where)
    else:
        need(half, "time", NUMBER, where)
    need(half, "alg_bw", NUMBER, where)
    need(half, "bus_bw", NUMBER, where)
    if "nwrong" not in half:
        raise Bad(f"{where}: no 'nwrong'")
    if half["nwrong"] is not None:
        need(half, "nwrong", NUMBER, where)


def check_per_iter(per, nranks, skip, where):
    for key in ("min_us", "max_us", "avg_us", "p50_us", "p95_us", "p99_us",
                "stdev_us", "cv_pct"):
        need(per, key, NUMBER, where)
    if need(per, "skipped_iterations", int, where) != skip:
        raise Bad(f"{where}.skipped_iterations: not {skip}")
    times = need(per, "times_us", list, where)
    numbers(times, where + ".times_us")
    rows = need(per, "per_process_max_times_us", list, where)
    if len(rows) != nranks:
        raise Bad(f"{where}: {len(rows)} process rows, not {nranks}")
    for r, row in enumerate(rows):
        numbers(row, f"{where}.per_process_max_times_us[{r}]")
        if len(row) != len(times):
            raise Bad(f"{where}: row {r} has {len(row)} samples, "
                      f"times_us {len(times)}")
    # times_us is each iteration's largest over the process rows.
    for i, t in enumerate(times):
        if abs(t - max(row[i] for row in rows)) > 1e-3 * max(1.0, t):
            raise Bad(f"{where}: times_us[{i}] {t} is not the rows' max")
    # The summary is of the samples after the skip.
    kept = sorted(times[skip:])
    if not kept:
        raise Bad(f"{where}: no sample after skipping {skip}")
    for key, want in (("min_us", kept[0]), ("max_us", kept[-1]),
                      ("p50_us", kept[len(kept) // 2])):
        if abs(per[key] - want) > 1e-3 * max(1.0, want):
            raise Bad(f"{where}.{key}: {per[key]}, want {want}")


THEIR_TYPE = {"fp8_e4m3": "f8e4m3", "fp8_e5m2": "f8e5m2"}


def table_rows(path):
    rows = []
    with open(path) as f:
        for line in f:
            fields = line.split()
            if fields and fields[0].isdigit():
                # Their spellings: ours under our name, theirs under theirs.
                rows.append((int(fields[0]), int(fields[1]),
                             THEIR_TYPE.get(fields[2], fields[2]),
                             "mulsum" if fields[3] == "premulsum" else fields[3],
                             int(fields[4])))
    return rows


def check(doc, nranks, skip, table):
    if need(doc, "version", int, "top") != 3:
        raise Bad("version is not 3")
    need(doc, "start_time", str, "top")
    for key in ("args", "env"):
        for item in need(doc, key, list, "top"):
            if not isinstance(item, str):
                raise Bad(f"{key}: holds {item!r}")
    need(doc, "nccl_version", int, "top")
    config = need(doc, "config", dict, "top")
    for key in ("nthreads", "ngpus", "minimum_bytes", "maximum_bytes",
                "warmup_iters", "iterations", "aggregated_iterations",
                "validation", "graph", "per_iter_skip"):
        need(config, key, int, "config")
    if "step_factor" not in config:
        need(config, "step_bytes", int, "config")
    for key in ("blocking_collectives", "per_iter_timing", "parallel_init"):
        their_bool(config, key, "config")
    devices = need(config, "devices", list, "config")
    if len(devices) != nranks:
        raise Bad(f"config.devices: {len(devices)} entries, not {nranks}")
    for r, dev in enumerate(devices):
        where = f"config.devices[{r}]"
        for key in ("rank", "group", "pid", "device"):
            need(dev, key, int, where)
        for key in ("hostname", "device_hex", "device_info"):
            need(dev, key, str, where)
        if dev["rank"] != r:
            raise Bad(f"{where}: rank {dev['rank']}")
    results = need(doc, "results", list, "top")
    if not results:
        raise Bad("results: empty")
    for n, res in enumerate(results):
        where = f"results[{n}]"
        need(res, "size", int, where)
        need(res, "count", int, where)
        need(res, "type", str, where)
        need(res, "redop", str, where)
        root = need(res, "root", str, where)
        int(root)  # their width-6 number
        check_half(need(res, "out_of_place", dict, where), where + ".out_of_place")
        if res.get("in_place") is not None:
            check_half(res["in_place"], where + ".in_place")
        for key in ("out_of_place_per_iter", "in_place_per_iter"):
            if skip is None:
                if key in res:
                    raise Bad(f"{where}: {key} without -I 1")
            elif key == "out_of_place_per_iter" or res.get("in_place"):
                check_per_iter(need(res, key, dict, where), nranks, skip,
                               f"{where}.{key}")
    ob = need(doc, "out_of_bounds", dict, "top")
    need(ob, "count", int, "out_of_bounds")
    their_bool(ob, "okay", "out_of_bounds")
    avg = need(doc, "average_bus_bandwidth", dict, "top")
    need(avg, "bandwidth", NUMBER, "average_bus_bandwidth")
    need(doc, "end_time", str, "top")
    if table is not None:
        rows = table_rows(table)
        mine = [(r["size"], r["count"], r["type"], r["redop"], int(r["root"]))
                for r in results]
        if rows != mine:
            raise Bad(f"results {mine} differ from the table's rows {rows}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--per-iter", type=int, default=None)
    ap.add_argument("--table")
    args = ap.parse_args()
    with open(args.file) as f:
        doc = json.load(f)
    try:
        check(doc, args.ranks, args.per_iter, args.table)
    except Bad as e:
        print(f"{args.file}: {e}", file=sys.stderr)
        return 1
    print(f"{args.file}: {len(doc['results'])} results match nccl-tests' schema")
    return 0


if __name__ == "__main__":
    sys.exit(main())
