# --prom's file without a monitoring system: every file these runs write
# reads strictly (tests/support/prom_check.py: HELP and TYPE before each
# family, no series twice, escapes only \\ \" \n, UTF-8) and passes
# `promtool check metrics` where it is installed; its result series equal
# the CSV's rows label by label; --prom-sizes keeps exactly the sizes asked
# for; host names (NCCL_HOSTID) and a Slurm job id made to forge lines keep
# their values as labels; -N rewrites the file after each whole cycle (every
# version seen while the run goes on shows one whole cycle and no exit
# status), a -N 0 run stopped by SIGTERM leaves its latest whole cycle
# with status 143, a run that fails before measuring leaves its status
# alone; bad values of the options are usage errors.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python

CHECK="$CB_SRCDIR/tests/support/prom_check.py"
# The checks below import it: no bytecode cache in the source tree.
PYTHONDONTWRITEBYTECODE=1
export PYTHONDONTWRITEBYTECODE
d="$CB_TMP/text"
mkdir "$d"

# prom FILE: a strict reading of FILE and promtool's (where installed; its
# one accepted lint is NCCL Inspector's microseconds in a metric's name).
prom() {
    "$CB_PYTHON" "$CHECK" lint "$1" || { cat "$1" >&2; fail "$1 does not read as the text format"; }
}

# A sweep with a rooted collective, the barrier (no bandwidth), two types,
# two reductions and both placements.
SWEEP="--backend mpi -o allreduce,broadcast,barrier -d float,int32 --redop sum,max -b 8 -e 4K -f 8 -n 3"
run 2 $SWEEP --csv "$CB_TMP/all.csv" --prom "$d/all.prom"
expect_rc 0 "--prom"
prom "$d/all.prom"
"$CB_PYTHON" "$CHECK" results "$d/all.prom" "$CB_TMP/all.csv" || fail "the series are not the CSV's"
"$CB_PYTHON" "$CHECK" count "$d/all.prom" "$CB_TMP/all.csv" || fail "more or fewer series than documented"
"$CB_PYTHON" "$CHECK" info "$d/all.prom" backend=mpi slurm_job_id= || fail "the info series"
grep -q '^nccl_collbench_exit_status{source="all"} 0$' "$d/all.prom" || fail "no exit status 0"
ls "$d" | grep -v '^all\.prom$' && fail "a temporary file was left beside the file"

# Not checked (-c 0): no wrong-element series, the rest as many as before.
run 2 --backend mpi -o allreduce,barrier -b 8 -e 1K -f 8 -n 2 -c 0 --csv "$CB_TMP/c0.csv" \
    --prom "$d/c0.prom"
expect_rc 0 "--prom with -c 0"
prom "$d/c0.prom"
"$CB_PYTHON" "$CHECK" count "$d/c0.prom" "$CB_TMP/c0.csv" || fail "-c 0: the series count"
grep -q '^nccl_collbench_wrong_elements{' "$d/c0.prom" && fail "-c 0: wrong elements reported"
rm "$d/c0.prom"

# --prom-sizes: each series' largest size, or the sizes listed (the barrier
# has size 0, so it goes unless 0 is listed).
run 2 $SWEEP --csv "$CB_TMP/l.csv" --prom "$d/l.prom" --prom-sizes largest
expect_rc 0 "--prom-sizes largest"
prom "$d/l.prom"
"$CB_PYTHON" "$CHECK" sizes "$d/l.prom" "$CB_TMP/l.csv" largest || fail "--prom-sizes largest"
run 2 $SWEEP --csv "$CB_TMP/s.csv" --prom "$d/s.prom" --prom-sizes 64,4K
expect_rc 0 "--prom-sizes 64,4K"
prom "$d/s.prom"
"$CB_PYTHON" "$CHECK" sizes "$d/s.prom" "$CB_TMP/s.csv" 64,4096 || fail "--prom-sizes 64,4K"
n=$(grep -c '^nccl_bus_bandwidth_gbs{' "$d/s.prom")
[ "$n" = 24 ] || fail "--prom-sizes 64,4K: $n bus bandwidth series, not 2 collectives x 2 types x 2 reductions x 2 placements x 2 sizes less broadcast's reductions (24)"

# Hostile values: host names and a Slurm job id that try to end the label,
# the line, or the UTF-8; three hosts of two ranks, the third slowed by the
# fault layer so that the scan names a suspect.
printf 'h0"} 1\nforged_metric{a="' >"$CB_TMP/id0"
printf 'back\\slash\\' >"$CB_TMP/id1"
printf 'latin\377\n# TYPE x counter' >"$CB_TMP/id2"
cat >"$CB_TMP/hostile.sh" <<LAUNCHER
#!/bin/sh
rank=\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-\${PMIX_RANK:-}}}
[ -n "\$rank" ] || { echo "hostile.sh: the launcher set no rank variable" >&2; exit 99; }
NCCL_HOSTID=\$(cat "$CB_TMP/id\$((rank / 2))"; echo x)
NCCL_HOSTID=\${NCCL_HOSTID%x}
SLURM_JOB_ID=\$(cat "$CB_TMP/jobid")
export NCCL_HOSTID SLURM_JOB_ID
exec "$CB_BUILDDIR/tests/nccl-collbench-faulty" "\$@"
LAUNCHER
chmod +x "$CB_TMP/hostile.sh"
# The job id is set in the ranks only: a launcher that sees SLURM_JOB_ID
# may take the run for a Slurm job's.
printf '42"} 1\nforged{a="\\' >"$CB_TMP/jobid"
NCCL_COLLBENCH_TEST_FAULT=slow:4:5:50 \
    CB_RUN_BIN=$CB_TMP/hostile.sh run 6 --backend faulty-mpi -o scan -b 64K -e 64K -n 4 -w 1 \
    --suspect-ratio 0.1 --csv "$CB_TMP/h.csv" --prom "$d/hostile.prom"
expect_rc 8 "the hostile scan with host 2 slowed"
prom "$d/hostile.prom"
grep -q '^forged' "$d/hostile.prom" && fail "a label value forged a line"
"$CB_PYTHON" "$CHECK" scan "$d/hostile.prom" "$CB_TMP/h.csv" || fail "hostile scan series"
SLURM_JOB_ID=$(cat "$CB_TMP/jobid") "$CB_PYTHON" "$CHECK" info "$d/hostile.prom" \
    slurm_job_id=@SLURM_JOB_ID || fail "the Slurm job id did not keep its value"
"$CB_PYTHON" - "$d/hostile.prom" "$CHECK" <<'PY' || fail "the suspect series"
import importlib.util, sys
spec = importlib.util.spec_from_file_location("prom_check", sys.argv[2])
pc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pc)
fams = pc.parse(sys.argv[1])
sus = fams["nccl_collbench_scan_suspect_ratio"]["samples"]
host2 = "latin\u00ff\n# TYPE x counter"
assert any(l.get("host") == host2 and l["kind"] == "node" and 0 <= v < 0.1 for l, v in sus), sus
assert fams["nccl_collbench_scan_suspects"]["samples"][0][1] == len(sus), sus
hosts = {l["host"] for l, _ in fams["nccl_collbench_scan_node_bus_bandwidth_gbs"]["samples"]}
assert hosts == {'h0"} 1\nforged_metric{a="', "back\\slash\\", host2}, hosts
assert fams["nccl_collbench_exit_status"]["samples"][0][1] == 8
PY

# A run that fails before measuring (the fault layer fails rank 1's buffer
# allocations) replaces an earlier file with its exit status alone: the
# earlier results go stale, and an alert on the status fires.
cp "$d/all.prom" "$d/early.prom"
NCCL_COLLBENCH_TEST_FAULT=alloc:1 CB_RUN_BIN="$CB_BUILDDIR/tests/nccl-collbench-faulty" \
    run 2 --backend faulty-mpi -b 8 -e 1K -n 2 --prom "$d/early.prom"
expect_rc 1 "rank 1's allocations failing"
prom "$d/early.prom"
"$CB_PYTHON" - "$d/early.prom" "$CHECK" <<'PY' || fail "the file of a run that failed early"
import importlib.util, sys
spec = importlib.util.spec_from_file_location("prom_check", sys.argv[2])
pc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pc)
fams = pc.parse(sys.argv[1])
assert sorted(fams) == ["nccl_collbench_end_timestamp_seconds", "nccl_collbench_exit_status"], fams
assert fams["nccl_collbench_exit_status"]["samples"] == [({"source": "early"}, 1.0)], fams
PY

# -N 3: the file is replaced after each whole cycle; a watcher reads every
# version while the run goes on. Every launch sleeps 5 ms (the fault
# layer's slow host, both ranks), so that a cycle lasts about half a second
# on any MPI and the watcher, reading every 20 ms, sees the cycles' versions.
rm -f "$CB_TMP/done"
"$CB_PYTHON" "$CHECK" watch "$d/cycles.prom" "$CB_TMP/done" 3 >"$CB_TMP/watch" 2>&1 &
watcher=$!
NCCL_COLLBENCH_TEST_FAULT=slow:0:1:5 CB_RUN_BIN="$CB_BUILDDIR/tests/nccl-collbench-faulty" \
    run 2 --backend faulty-mpi -o allreduce -b 8 -e 256K -f 4 -n 5 -N 3 --prom "$d/cycles.prom"
touch "$CB_TMP/done"
wrc=0
wait $watcher || wrc=$?
cat "$CB_TMP/watch"
expect_rc 0 "-N 3"
[ "$wrc" = 0 ] || fail "the file during the cycles"
prom "$d/cycles.prom"

# A health check until stopped (-N 0) stopped by SIGTERM to its ranks after
# two whole cycles: the file keeps the latest whole cycle, with the status
# of SIGTERM and no temporary file beside it.
cat >"$CB_TMP/pid_rank.sh" <<LAUNCHER
#!/bin/sh
rank=\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-\${PMIX_RANK:-}}}
echo \$\$ >"$CB_TMP/pid.\$rank"
exec "\$@"
LAUNCHER
chmod +x "$CB_TMP/pid_rank.sh"
timeout -k 5 120 $CB_MPIRUN -np 2 "$CB_TMP/pid_rank.sh" "$CB_BIN" --backend mpi -o allreduce \
    -b 8 -e 64K -f 4 -n 20 -N 0 --prom "$d/forever.prom" </dev/null >"$CB_TMP/out" 2>"$CB_TMP/err" &
pid=$!
i=0
until grep -q '^nccl_collbench_cycles_completed_total{source="forever"} [2-9]' "$d/forever.prom" 2>/dev/null &&
    [ -s "$CB_TMP/pid.1" ]; do
    i=$((i + 1))
    [ $i -le 600 ] || { kill -KILL $pid; fail "no second whole cycle within 60 s"; }
    kill -0 $pid 2>/dev/null || show_and_fail "the run ended before it could be stopped"
    sleep 0.1
done
kill -TERM "$(cat "$CB_TMP/pid.0")" "$(cat "$CB_TMP/pid.1")"
rc=0
wait $pid || rc=$?
# The launcher's own status after its ranks' SIGTERM is its own; the file's is checked below.
[ "$rc" != 0 ] || show_and_fail "status 0 after SIGTERM to a -N 0 run"
prom "$d/forever.prom"
ls -a "$d" | grep -q tmp && fail "a temporary file was left: $(ls -a "$d")"
"$CB_PYTHON" - "$d/forever.prom" "$CHECK" <<'PY' || fail "the file after SIGTERM"
import importlib.util, sys
spec = importlib.util.spec_from_file_location("prom_check", sys.argv[2])
pc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pc)
fams = pc.parse(sys.argv[1])
one = lambda name: pc.one(fams, name)
assert one("nccl_collbench_exit_status") == 143, one("nccl_collbench_exit_status")
done = one("nccl_collbench_cycles_completed_total")
assert done >= 2 and one("nccl_collbench_results_cycle") == done, fams
# A whole cycle: 7 sizes (8 B to 32 KiB by 4) in both placements.
assert len(fams["nccl_bus_bandwidth_gbs"]["samples"]) == 14, fams["nccl_bus_bandwidth_gbs"]
PY

# Usage errors: status 2 and one message naming the value.
for bad in "--prom-sizes 8,,16" "--prom-sizes 12Q" "--prom-sizes 8,8" "--prom -" "--prom="; do
    run 2 --backend mpi -b 8 -e 8 --prom "$d/u.prom" $bad
    expect_rc 2 "$bad"
    grep -q '^nccl-collbench: --prom' "$CB_TMP/err" || show_and_fail "$bad: no message naming --prom"
done
run 2 --backend mpi -b 8 -e 8 --json "$d/same" --prom "$d/./same"
expect_rc 2 "--json and --prom the same file"
grep -qF -- "--json $d/same and --prom $d/./same are the same file" "$CB_TMP/err" ||
    show_and_fail "no message naming both"
[ ! -e "$d/u.prom" ] && [ ! -e "$d/same" ] || fail "a refused run wrote a file"
echo "ok"
