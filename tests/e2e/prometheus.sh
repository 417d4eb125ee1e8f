# --prom through a real monitoring system: node_exporter on a free
# localhost port with only its textfile collector reading a folder of ours,
# Prometheus scraping it every second on another free port with its own
# storage folder. The program writes DIR/nccl.prom; Prometheus' HTTP API
# (/api/v1/query) must then give every result series with the CSV's value
# for the same row, label by label, and the run's info series with a Slurm
# job id made to forge lines, intact. A second run, a health scan whose
# host names (NCCL_HOSTID) try the same, replaces the file: its series
# reach Prometheus with their hosts intact and the CSV's figures, and the
# sweep's series go stale. A third run's file beside it (its own source
# label) is served beside the scan's. Both
# servers are stopped by their PIDs whatever happens. Skips (77) where
# Debian's prometheus or prometheus-node-exporter is not installed
# (ci/install-deps.sh installs them).
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python

PROMETHEUS=$(command -v prometheus || true)
EXPORTER=$(command -v prometheus-node-exporter || command -v node_exporter || true)
[ -n "$PROMETHEUS" ] || skip "prometheus is not installed (Debian's package prometheus; ci/install-deps.sh installs it)"
[ -n "$EXPORTER" ] || skip "node_exporter is not installed (Debian's package prometheus-node-exporter; ci/install-deps.sh installs it)"
CHECK="$CB_SRCDIR/tests/support/prom_check.py"

exporter_pid=""
prometheus_pid=""
# stop_servers: each server we started, by its PID: SIGTERM, then SIGKILL
# after 10 s; waited for, so that nothing writes in $CB_TMP once removed.
stop_servers() {
    for pid in $exporter_pid $prometheus_pid; do
        kill "$pid" 2>/dev/null || continue
        i=0
        while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do
            i=$((i + 1))
            sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    exporter_pid=""
    prometheus_pid=""
}
trap stop_servers EXIT
trap 'exit 1' INT TERM HUP

# free_port (lib.sh): another process may take the port before the server
# does: start_servers then tries again.
textdir="$CB_TMP/textfile"
mkdir "$textdir"

# start_servers: both servers up and answering; at most three tries with
# new ports, each waiting up to 60 s (polled, never a fixed sleep).
start_servers() {
    try=0
    while [ $try -lt 3 ]; do
        try=$((try + 1))
        stop_servers
        exporter_port=$(free_port)
        prometheus_port=$(free_port)
        "$EXPORTER" --web.listen-address="127.0.0.1:$exporter_port" \
            --collector.disable-defaults --collector.textfile \
            --collector.textfile.directory="$textdir" >"$CB_TMP/exporter.log" 2>&1 &
        exporter_pid=$!
        cat >"$CB_TMP/prometheus.yml" <<CONFIG
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: nccl
    static_configs:
      - targets: ['127.0.0.1:$exporter_port']
CONFIG
        rm -rf "$CB_TMP/tsdb"
        "$PROMETHEUS" --config.file="$CB_TMP/prometheus.yml" --storage.tsdb.path="$CB_TMP/tsdb" \
            --web.listen-address="127.0.0.1:$prometheus_port" >"$CB_TMP/prometheus.log" 2>&1 &
        prometheus_pid=$!
        if "$CB_PYTHON" "$CHECK" wait-http "http://127.0.0.1:$exporter_port/metrics" 60 &&
            "$CB_PYTHON" "$CHECK" wait-http "http://127.0.0.1:$prometheus_port/-/ready" 60; then
            return 0
        fi
        echo "note: the servers did not start (try $try); their logs:" >&2
        tail -n 5 "$CB_TMP/exporter.log" "$CB_TMP/prometheus.log" >&2
    done
    fail "node_exporter and Prometheus did not start in three tries"
}
start_servers
api="http://127.0.0.1:$prometheus_port"
PROM_SOURCE=nccl   # the source label of DIR/nccl.prom
export PROM_SOURCE

# series_of RUN_ID: until Prometheus has the info series of that run.
series_of() {
    "$CB_PYTHON" "$CHECK" wait-query "$api" "nccl_collbench_run_info{run_id=\"$1\"}" 60 || {
        tail -n 20 "$CB_TMP/exporter.log" "$CB_TMP/prometheus.log" >&2
        fail "Prometheus has no series of run $1 within 60 s of the run"
    }
}
run_id() {
    "$CB_PYTHON" -c 'import csv, sys; print(next(csv.DictReader(open(sys.argv[1], errors="surrogateescape")))["run_id"])' "$1"
}

# A sweep, with a Slurm job id that tries to end the label and the line,
# set in the ranks only (a launcher that sees SLURM_JOB_ID may take the run
# for a Slurm job's).
printf '7"} 1\nforged{a="\\' >"$CB_TMP/jobid"
cat >"$CB_TMP/job.sh" <<LAUNCHER
#!/bin/sh
SLURM_JOB_ID=\$(cat "$CB_TMP/jobid")
export SLURM_JOB_ID
exec "$CB_BIN" "\$@"
LAUNCHER
chmod +x "$CB_TMP/job.sh"
CB_RUN_BIN=$CB_TMP/job.sh run 2 --backend mpi -o allreduce,broadcast,barrier -d float,int32 \
    -b 8 -e 4K -f 8 -n 3 --csv "$CB_TMP/sweep.csv" --prom "$textdir/nccl.prom"
expect_rc 0 "the sweep"
"$CB_PYTHON" "$CHECK" lint "$textdir/nccl.prom" || fail "the sweep's file"
series_of "$(run_id "$CB_TMP/sweep.csv")"
# The whole file is in one scrape: the result series are there with it.
"$CB_PYTHON" "$CHECK" results "$api" "$CB_TMP/sweep.csv" ||
    fail "Prometheus' series are not the CSV's rows"
SLURM_JOB_ID=$(cat "$CB_TMP/jobid") "$CB_PYTHON" "$CHECK" info "$api" \
    slurm_job_id=@SLURM_JOB_ID backend=mpi || fail "the info series in Prometheus"

# A health scan over two hosts of two ranks whose names try the same.
printf 'n0"} 1\nforged{a="' >"$CB_TMP/id0"
printf 'n1\\\377' >"$CB_TMP/id1"
cat >"$CB_TMP/hostile.sh" <<LAUNCHER
#!/bin/sh
rank=\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-\${PMIX_RANK:-}}}
[ -n "\$rank" ] || { echo "hostile.sh: the launcher set no rank variable" >&2; exit 99; }
NCCL_HOSTID=\$(cat "$CB_TMP/id\$((rank / 2))")
export NCCL_HOSTID
exec "$CB_BIN" "\$@"
LAUNCHER
chmod +x "$CB_TMP/hostile.sh"
CB_RUN_BIN=$CB_TMP/hostile.sh run 4 --backend mpi -o scan -b 64K -e 64K -n 4 -w 1 \
    --suspect-ratio 0.01 --csv "$CB_TMP/scan.csv" --prom "$textdir/nccl.prom"
expect_rc 0 "the scan"
"$CB_PYTHON" "$CHECK" lint "$textdir/nccl.prom" || fail "the scan's file"
series_of "$(run_id "$CB_TMP/scan.csv")"
"$CB_PYTHON" "$CHECK" scan "$api" "$CB_TMP/scan.csv" || fail "Prometheus' scan series"
# The sweep's series went stale with the file they were in.
"$CB_PYTHON" "$CHECK" wait-query "$api" 'absent(nccl_bus_bandwidth_gbs)' 30 ||
    fail "the sweep's series stayed after the file was replaced"
# A second file beside it, from another run: its series carry its own
# source label, so node_exporter serves both files' series without a clash.
run 2 --backend mpi -o allreduce -b 8 -e 64 -f 8 -n 2 --csv "$CB_TMP/second.csv" \
    --prom "$textdir/second.prom"
expect_rc 0 "the second file's run"
"$CB_PYTHON" "$CHECK" lint "$textdir/second.prom" || fail "the second file"
series_of "$(run_id "$CB_TMP/second.csv")"
"$CB_PYTHON" "$CHECK" wait-query "$api" 'count(nccl_collbench_run_info) == 2' 30 ||
    fail "Prometheus does not have both files' info series"
PROM_SOURCE=second "$CB_PYTHON" "$CHECK" results "$api" "$CB_TMP/second.csv" ||
    fail "the second file's series"
stop_servers
echo "ok"
