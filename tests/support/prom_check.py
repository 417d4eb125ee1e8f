#!/usr/bin/env python3
"""Checks of --prom's files and of what Prometheus made of them, for
tests/e2e/prometheus.sh and tests/e2e/prom_file.sh.

  prom_check.py parse FILE                 a strict reading of the text format
  prom_check.py lint FILE                  that, and `promtool check metrics`
                                           where installed (one lint accepted)
  prom_check.py wait-http URL SECONDS      until URL answers 200
  prom_check.py wait-query URL QUERY SECONDS [MIN]  until QUERY has MIN series
  prom_check.py results SOURCE CSV         result series equal the CSV's rows
  prom_check.py scan SOURCE CSV            scan series equal the CSV's rows
  prom_check.py sizes FILE CSV WHICH       --prom-sizes kept exactly WHICH
  prom_check.py count FILE CSV             the series are as many as
                                           nccl-collbench-output(5) says
  prom_check.py info SOURCE KEY=VALUE...   the info series' labels (values
                                           taken from the environment with @NAME)
  prom_check.py watch FILE DONE CYCLES     until file DONE exists, every version
                                           of FILE is whole and shows a whole cycle

SOURCE is a file or http://HOST:PORT (Prometheus' /api/v1/query). Label
values from host names are compared after the printer's mapping of bytes
that are not UTF-8 (each such byte is the Latin-1 character).
"""
import calendar
import csv
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


class Bad(Exception):
    pass


def parse_labels(text, pos, line):
    """Labels from text[pos] (just after '{') to the closing '}'."""
    labels = {}
    while True:
        if text[pos] == "}":
            return labels, pos + 1
        m = LABEL.match(text, pos)
        if not m or text[m.end():m.end() + 2] != '="':
            raise Bad("bad label at %r" % line)
        name, pos = m.group(0), m.end() + 2
        value = []
        while text[pos] != '"':
            c = text[pos]
            if c == "\\":
                nxt = text[pos + 1]
                if nxt not in '\\"n':
                    raise Bad("bad escape \\%s in %r" % (nxt, line))
                value.append("\n" if nxt == "n" else nxt)
                pos += 2
            elif c == "\n":
                raise Bad("a line feed in a label value: %r" % line)
            else:
                value.append(c)
                pos += 1
        if name in labels:
            raise Bad("label %s twice in %r" % (name, line))
        labels[name] = "".join(value)
        pos += 1
        if text[pos] == ",":
            pos += 1
        elif text[pos] != "}":
            raise Bad("expected , or } in %r" % line)


def parse(path):
    return parse_bytes(open(path, "rb").read())


def parse_bytes(raw):
    """{name: {"type", "help", "samples": [(labels, value)]}}, strictly."""
    text = raw.decode("utf-8")  # not UTF-8 is an error
    if text and not text.endswith("\n"):
        raise Bad("the file does not end with a line feed")
    families, seen, current = {}, set(), None
    for line in text.split("\n")[:-1]:
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            word, rest = line[2:6], line[7:]
            name, _, value = rest.partition(" ")
            if not NAME.fullmatch(name):
                raise Bad("bad name in %r" % line)
            fam = families.setdefault(name, {"samples": []})
            if fam["samples"] or word.lower() in fam:
                raise Bad("%s after the samples or twice: %r" % (word, line))
            if current != name and name in seen:
                raise Bad("family %s split in two" % name)
            current = name
            seen.add(name)
            fam[word.lower()] = value
            continue
        if line.startswith("#") or line == "":
            raise Bad("unexpected line %r" % line)
        m = NAME.match(line)
        if not m:
            raise Bad("bad sample %r" % line)
        name, pos = m.group(0), m.end()
        labels = {}
        if line[pos:pos + 1] == "{":
            labels, pos = parse_labels(line + " ", pos + 1, line)
        if line[pos:pos + 1] != " ":
            raise Bad("no value in %r" % line)
        value = line[pos + 1:]
        if " " in value:
            raise Bad("a timestamp or more in %r (node_exporter refuses timestamps)" % line)
        number = float(value)
        fam = families.get(name)
        if fam is None or name != current or "help" not in fam or "type" not in fam:
            raise Bad("sample %r without its HELP and TYPE just before" % line)
        if any(s[0] == labels for s in fam["samples"]):
            raise Bad("series twice: %r" % line)
        fam["samples"].append((labels, number))
    for name, fam in families.items():
        if not fam["samples"]:
            raise Bad("family %s has no samples" % name)
        if (fam["type"] == "counter") != name.endswith("_total"):
            raise Bad("%s: a counter ends in _total, nothing else does" % name)
    return families


# promtool's linter asks for seconds in every time metric's name; NCCL
# Inspector's name is kept so that its dashboards work, and that is the one
# message accepted.
ACCEPTED_LINT = ('nccl_collective_exec_time_microseconds use base unit "seconds" '
                 'instead of "microseconds"')


def lint(path):
    fams = parse(path)
    promtool = shutil.which("promtool")
    if promtool is None:
        print("note: promtool is not installed: %s only read strictly" % path)
        return fams
    with open(path, "rb") as f:
        p = subprocess.run([promtool, "check", "metrics"], stdin=f, capture_output=True,
                           text=True, errors="replace")
    others = [l for l in (p.stdout + p.stderr).splitlines() if l and l != ACCEPTED_LINT]
    if p.returncode not in (0, 3) or others:
        raise Bad("promtool check metrics %s: status %d: %s" % (path, p.returncode, others))
    return fams


def query(url, q):
    full = url.rstrip("/") + "/api/v1/query?" + urllib.parse.urlencode({"query": q})
    with urllib.request.urlopen(full, timeout=5) as r:
        doc = json.load(r)
    if doc.get("status") != "success":
        raise Bad("query %s: %r" % (q, doc))
    return doc["data"]["result"]


def series(source, name):
    """[(labels, value)] of metric name, from a file or from Prometheus
    (without the labels the scrape adds)."""
    if source.startswith("http://"):
        out = []
        for x in query(source, name):
            labels = {k: v for k, v in x["metric"].items()
                      if k not in ("__name__", "instance", "job")}
            out.append((labels, float(x["value"][1])))
        return out
    return parse(source).get(name, {"samples": []})["samples"]


def host_text(value):
    """A host as the printer writes it: bytes that are not UTF-8 as Latin-1."""
    raw = value.encode("utf-8", "surrogateescape")
    out, i = [], 0
    while i < len(raw):
        for n in (1, 2, 3, 4):
            try:
                out.append(raw[i:i + n].decode("utf-8"))
                i += n
                break
            except UnicodeDecodeError:
                continue
        else:
            out.append(chr(raw[i]))
            i += 1
    return "".join(out)


def read_csv(path):
    with open(path, newline="", encoding="utf-8", errors="surrogateescape") as f:
        return list(csv.DictReader(f))


def same(a, b):
    return a == b or (math.isnan(a) and math.isnan(b))


def expect_equal(source, name, want):
    src = source_label(source)   # another file's series are not these
    got = {tuple(sorted(l.items())): v for l, v in series(source, name) if l.get("source") == src}
    want = {tuple(sorted(l.items())): v for l, v in want}
    if set(got) != set(want):
        raise Bad("%s: series differ\n  only in %s: %s\n  only in the CSV: %s" % (
            name, source, sorted(set(got) - set(want))[:5], sorted(set(want) - set(got))[:5]))
    for key, v in want.items():
        if not same(got[key], v):
            raise Bad("%s%s: %r, the CSV says %r" % (name, dict(key), got[key], v))
    return len(want)


def source_label(source):
    """The source label a file's series carry: its name less .prom; for
    Prometheus, $PROM_SOURCE (the file it scraped)."""
    if source.startswith("http://"):
        return os.environ["PROM_SOURCE"]
    name = os.path.basename(source)
    return name[:-5] if name.endswith(".prom") else name


def result_labels(r, src):
    labels = {"source": src, "collective": r["collective"], "datatype": r["datatype"], "redop": r["redop"],
              "placement": r["placement"], "nranks": r["group_ranks"], "n_nodes": r["nodes"],
              "backend": r["backend"], "message_size": r["bytes"]}
    if int(r["root"]) >= 0:
        labels["root"] = r["root"]
    for column in ("group", "impl", "traffic_matrix"):
        if r[column]:
            labels[column] = r[column]
    if r["layout"] == "col":
        labels["layout"] = "col"
    return labels


def check_results(source, rows):
    src = source_label(source)
    rows = [r for r in rows if not r["scan_part"]]
    data = [r for r in rows if r["collective"] != "barrier"]
    n = expect_equal(source, "nccl_bus_bandwidth_gbs",
                     [(result_labels(r, src), float(r["busbw_gbps"])) for r in data])
    n += expect_equal(source, "nccl_collbench_algorithm_bandwidth_gbs",
                      [(result_labels(r, src), float(r["algbw_gbps"])) for r in data])
    n += expect_equal(source, "nccl_collective_exec_time_microseconds",
                      [(result_labels(r, src), float(r["time_us"])) for r in rows])
    n += expect_equal(source, "nccl_collbench_wrong_elements",
                      [(result_labels(r, src), float(r["wrong"])) for r in rows if r["wrong"] != ""])
    n += expect_equal(source, "nccl_collbench_unrepeatable_launches",
                      [(result_labels(r, src), float(r["unrepeatable"])) for r in rows
                       if r.get("unrepeatable", "") != ""])
    n += expect_equal(source, "nccl_collbench_efficiency_ratio",
                      [(result_labels(r, src), float(r["efficiency"])) for r in rows
                       if r.get("efficiency", "") != ""])
    if rows:
        start = calendar.timegm(time.strptime(rows[0]["start_utc"], "%Y-%m-%dT%H:%M:%SZ"))
        got = [v for l, v in series(source, "nccl_collbench_start_timestamp_seconds")
               if l.get("source") == source_label(source)]
        if got != [start]:
            raise Bad("start_timestamp_seconds %r, the CSV's start_utc is %d" % (got, start))
    print("%d result series equal the CSV's %d rows" % (n, len(rows)))


def check_scan(source, rows):
    src = source_label(source)
    first = [r for r in rows if r["scan_part"] in ("node", "pair", "rail")]
    n = expect_equal(source, "nccl_collbench_scan_node_bus_bandwidth_gbs",
                     [({"source": src, "host": host_text(r["host"])}, float(r["busbw_gbps"]))
                      for r in first if r["scan_part"] == "node"])
    n += expect_equal(source, "nccl_collbench_scan_pair_bandwidth_gbs",
                      [({"source": src, "host": host_text(r["host"]), "peer_host": host_text(r["peer_host"])},
                        float(r["busbw_gbps"])) for r in first if r["scan_part"] == "pair"])
    n += expect_equal(source, "nccl_collbench_scan_rail_bus_bandwidth_gbs",
                      [({"source": src, "rail": r["group"]}, float(r["busbw_gbps"]))
                       for r in first if r["scan_part"] == "rail"])
    print("%d scan series equal the CSV's rows" % n)


def check_sizes(path, rows, which):
    rows = [r for r in rows if not r["scan_part"]]
    src = source_label(path)
    key = lambda l: tuple(sorted((k, v) for k, v in l.items() if k != "message_size"))
    if which == "all":
        want = rows
    elif which == "largest":
        top = {}
        for r in rows:
            k = key(result_labels(r, src))
            top[k] = max(top.get(k, 0), int(r["bytes"]))
        want = [r for r in rows if int(r["bytes"]) == top[key(result_labels(r, src))]]
    else:
        sizes = {int(s) for s in which.split(",")}
        want = [r for r in rows if int(r["bytes"]) in sizes]
    check_results(path, want)


def check_count(path, rows):
    """The ended run's 8 series, and per result: its time, its two
    bandwidths where it moves data, its wrong elements where checked, its
    efficiency where it has an expectation (--expect)."""
    fams = parse(path)
    total = sum(len(f["samples"]) for f in fams.values())
    want = 8 + sum(1 + 2 * (r["collective"] != "barrier") + (r["wrong"] != "") +
                   (r.get("efficiency", "") != "") for r in rows if not r["scan_part"])
    if total != want:
        raise Bad("%s: %d series, not %d" % (path, total, want))


def check_info(source, pairs):
    got = series(source, "nccl_collbench_run_info")
    if len(got) != 1 or got[0][1] != 1:
        raise Bad("not one info series valued 1: %r" % got)
    labels = got[0][0]
    if labels.get("source") != source_label(source):
        raise Bad("info series source %r" % labels.get("source"))
    for pair in pairs:
        key, _, value = pair.partition("=")
        if value.startswith("@"):
            value = os.environ[value[1:]]
        if value == "":
            if key in labels:
                raise Bad("info label %s should be absent: %r" % (key, labels))
        elif labels.get(key) != value:
            raise Bad("info label %s is %r, not %r" % (key, labels.get(key), value))


def wait(seconds, what, ready):
    deadline = time.time() + float(seconds)
    while True:
        try:
            if ready():
                return
        except (OSError, Bad, ValueError):
            pass
        if time.time() > deadline:
            raise Bad("%s: not ready within %s s" % (what, seconds))
        time.sleep(0.2)


def one(fams, name):
    samples = fams.get(name, {"samples": []})["samples"]
    return samples[0][1] if samples else None


def watch(path, done_file, cycles):
    """Read FILE every 20 ms until DONE exists (then once more): each version must parse, show
    the same result series as the others (a whole cycle) with results_cycle
    equal to the cycles completed, and no exit status until the last."""
    seen, shapes, last = [], set(), None
    while True:
        running = not os.path.exists(done_file)
        try:
            text = open(path, "rb").read()
        except FileNotFoundError:
            text = None
        if text is not None and text != last:
            last = text
            fams = parse_bytes(text)
            done = one(fams, "nccl_collbench_cycles_completed_total")
            shown = one(fams, "nccl_collbench_results_cycle")
            status = one(fams, "nccl_collbench_exit_status")
            keys = frozenset(tuple(sorted(l.items()))
                             for l, _ in fams["nccl_bus_bandwidth_gbs"]["samples"])
            if done != shown:
                raise Bad("version %d shows cycle %r of %r completed" % (len(seen), shown, done))
            shapes.add(keys)
            seen.append((done, status))
        if not running:
            break
        time.sleep(0.02)
    if len(shapes) != 1:
        raise Bad("the versions show different series: %d sets" % len(shapes))
    done = [d for d, _ in seen]
    if done != sorted(done) or done[-1] != cycles or seen[-1][1] is None:
        raise Bad("versions seen (cycles completed, exit status): %r" % seen)
    if not any(status is None for _, status in seen):
        raise Bad("no version was seen while the run went on: %r" % seen)
    if any(status is not None for _, status in seen[:-1]):
        raise Bad("an exit status before the end: %r" % seen)
    print("versions seen (cycles completed, exit status): %r" % seen)


def main(argv):
    cmd = argv[1]
    if cmd == "parse":
        fams = parse(argv[2])
        print("%s: %d families, %d series" % (argv[2], len(fams),
                                              sum(len(f["samples"]) for f in fams.values())))
    elif cmd == "lint":
        fams = lint(argv[2])
        print("%s: %d families, %d series, promtool agrees" % (
            argv[2], len(fams), sum(len(f["samples"]) for f in fams.values())))
    elif cmd == "wait-http":
        def ok():
            with urllib.request.urlopen(argv[2], timeout=2) as r:
                return r.status == 200
        wait(argv[3], argv[2], ok)
    elif cmd == "wait-query":
        need = int(argv[5]) if len(argv) > 5 else 1
        wait(argv[4], argv[3], lambda: len(query(argv[2], argv[3])) >= need)
    elif cmd == "results":
        check_results(argv[2], read_csv(argv[3]))
    elif cmd == "scan":
        check_scan(argv[2], read_csv(argv[3]))
    elif cmd == "sizes":
        check_sizes(argv[2], read_csv(argv[3]), argv[4])
    elif cmd == "watch":
        watch(argv[2], argv[3], int(argv[4]))
    elif cmd == "count":
        check_count(argv[2], read_csv(argv[3]))
    elif cmd == "info":
        check_info(argv[2], argv[3:])
    else:
        raise SystemExit("unknown command " + cmd)


if __name__ == "__main__":
    try:
        main(sys.argv)
    except Bad as e:
        print("prom_check: %s" % e, file=sys.stderr)
        sys.exit(1)
