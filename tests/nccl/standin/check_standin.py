#!/usr/bin/env python3
"""Checks for the tests of the NCCL backend through the CPU stand-in.

check_standin.py csv --csv FILE --backend NAME --ranks N [--rows N]
                     [--min-us X] [--max-us X] [--wrong 0|any]
    every row: the backend and rank count; for nccl, library "NCCL x.y.z";
    time_us within [min, max) when given; wrong == 0 unless --wrong any
check_standin.py devices --table FILE --ranks N
    one "Using devices" line per rank, rank r on device r (one host), with
    distinct PCI bus ids and the stand-in's model name; a versions line
check_standin.py trace --prefix P --ranks N [--count NAME=N ...]
                       [--teardown destroy|abort] [--blocking 0|1]
                       [--groups-of N]
    per rank's trace P.RANK: no "VIOLATION" line (the stand-in's record of
    what real CUDA or NCCL would not allow, see standin.h); lines starting
    with NAME counted exactly; the
    communicator destroyed or aborted; nothing left alive at exit; with
    --blocking 1 no two collectives launched without a wait between them
    (with 0, at least once); --groups-of N: each group holds N collectives
    (these two in the sweep, after the backend's warmup of each kind of
    operation, which ends at the first cudaMemGetInfo)
"""
import argparse
import csv
import re
import sys


class Failure(Exception):
    pass


def ensure(cond, msg):
    if not cond:
        raise Failure(msg)


def check_csv(a):
    with open(a.csv, newline="") as f:
        rows = list(csv.DictReader(f))
    ensure(rows, "no CSV rows")
    if a.rows is not None:
        ensure(len(rows) == a.rows, "%d CSV rows, expected %d" % (len(rows), a.rows))
    for r in rows:
        ensure(r["backend"] == a.backend, "backend %r, expected %r" % (r["backend"], a.backend))
        ensure(int(r["ranks"]) == a.ranks, "ranks %r, expected %d" % (r["ranks"], a.ranks))
        if a.backend == "nccl":
            ensure(re.match(r"^NCCL \d+\.\d+\.\d+$", r["library"]), "library %r" % r["library"])
        t = float(r["time_us"])
        if a.min_us is not None:
            ensure(t >= a.min_us, "time_us %g below %g in %r" % (t, a.min_us, r))
        if a.max_us is not None:
            ensure(t < a.max_us, "time_us %g not below %g in %r" % (t, a.max_us, r))
        # barrier moves no data and is never checked: its wrong is empty.
        if a.wrong == "0" and r["collective"] != "barrier":
            ensure(r["wrong"] == "0", "wrong %r in %r" % (r["wrong"], r))


def check_devices(a):
    line_re = re.compile(r"^#\s+Rank\s+(\d+)\s+Pid\s+\d+\s+on\s+(\S+)\s+device\s+(-?\d+)\s+"
                         r"\[([^\]]*)\]\s+(.*)$")
    devices, versions = [], []
    with open(a.table) as f:
        for line in f:
            line = line.rstrip("\n")
            m = line_re.match(line)
            if m:
                devices.append(m.groups())
            if line.startswith("# versions: "):
                versions.append(line)
    ensure(len(devices) == a.ranks, "%d device lines, expected %d" % (len(devices), a.ranks))
    for rank, _host, device, _bus, model in devices:
        ensure(int(device) == int(rank), "rank %s on device %s" % (rank, device))
        ensure(model == "CPU stand-in GPU %s" % device, "model %r" % model)
    buses = [d[3] for d in devices]
    ensure(len(set(buses)) == len(buses) and all(re.match(r"^[0-9a-f]{4}:[0-9a-f]{2}:00\.0$", b)
                                                 for b in buses), "bus ids %r" % buses)
    ensure(len(versions) == 1 and re.match(
        r"^# versions: NCCL library \d+\.\d+\.\d+, header \d+\.\d+\.\d+; "
        r"CUDA runtime \d+\.\d+, driver \d+\.\d+$", versions[0]), "versions line %r" % versions)


def check_trace(a):
    for rank in range(a.ranks):
        path = "%s.%d" % (a.prefix, rank)
        with open(path) as f:
            lines = [l.split() for l in f.read().splitlines() if l.strip()]
        where = "rank %d trace" % rank
        for spec in a.count:
            name, want = spec.rsplit("=", 1)
            words = name.split()
            got = sum(1 for l in lines if l[:len(words)] == words)
            ensure(got == int(want), "%s: %d lines '%s', expected %s" % (where, got, name, want))
        bad = [" ".join(l) for l in lines if l[0] == "VIOLATION"]
        ensure(not bad, "%s: the stand-in saw what real CUDA or NCCL would not allow: %s"
               % (where, "; ".join(bad)))
        ensure(lines and lines[-1][0] == "exit", "%s: no exit line" % where)
        leaks = [w for w in lines[-1][1:] if not w.endswith("=0")]
        ensure(not leaks, "%s: left alive at exit: %s" % (where, " ".join(leaks)))
        names = [l[0] for l in lines]
        # The sweep: what follows the backend's warmup of each kind of
        # operation, which ends where it measures the free memory.
        first = names.index("cudaMemGetInfo") + 1 if "cudaMemGetInfo" in names else 0
        sweep, sweep_names = lines[first:], names[first:]
        if a.teardown == "destroy":
            ensure("ncclCommDestroy" in names and "ncclCommAbort" not in names,
                   "%s: the communicator was not destroyed normally" % where)
        elif a.teardown == "abort":
            ensure("ncclCommAbort" in names and "ncclCommDestroy" not in names,
                   "%s: the communicator was not aborted" % where)
        if a.blocking is not None:
            # Launches on the stream: ncclAllReduce outside capture, graph launches.
            seq = [n for n, l in zip(sweep_names, sweep)
                   if (n == "ncclAllReduce" and "capturing=0" in l) or n == "cudaGraphLaunch"
                   or n == "cudaStreamQuery"]
            back_to_back = sum(1 for x, y in zip(seq, seq[1:])
                               if x != "cudaStreamQuery" and y != "cudaStreamQuery")
            if a.blocking == 1:
                ensure(back_to_back == 0, "%s: %d launches not waited for with -z 1"
                       % (where, back_to_back))
            else:
                ensure(back_to_back > 0, "%s: every launch waited for with -z 0" % where)
        if a.groups_of is not None:
            inside, sizes = None, []
            for n, l in zip(sweep_names, sweep):
                if n == "ncclGroupStart":
                    ensure(inside is None, "%s: nested group" % where)
                    inside = 0
                elif n == "ncclGroupEnd":
                    ensure(inside is not None, "%s: group end without start" % where)
                    sizes.append(inside)
                    inside = None
                elif n == "ncclAllReduce" and inside is not None:
                    inside += 1
            ensure(sizes and all(s == a.groups_of for s in sizes),
                   "%s: groups of %r collectives, expected %d each" % (where, sizes, a.groups_of))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("csv")
    c.add_argument("--csv", required=True)
    c.add_argument("--backend", required=True)
    c.add_argument("--ranks", type=int, required=True)
    c.add_argument("--rows", type=int)
    c.add_argument("--min-us", type=float)
    c.add_argument("--max-us", type=float)
    c.add_argument("--wrong", default="0")
    d = sub.add_parser("devices")
    d.add_argument("--table", required=True)
    d.add_argument("--ranks", type=int, required=True)
    t = sub.add_parser("trace")
    t.add_argument("--prefix", required=True)
    t.add_argument("--ranks", type=int, required=True)
    t.add_argument("--count", action="append", default=[])
    t.add_argument("--teardown", choices=["destroy", "abort"])
    t.add_argument("--blocking", type=int, choices=[0, 1])
    t.add_argument("--groups-of", type=int)
    a = ap.parse_args()
    try:
        {"csv": check_csv, "devices": check_devices, "trace": check_trace}[a.cmd](a)
    except (Failure, OSError, KeyError, ValueError) as e:
        print("check_standin: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
