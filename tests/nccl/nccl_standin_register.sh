# -R through the CPU stand-in: 1 registers ncclMemAlloc'd buffers with
# ncclCommRegister (NCCL 2.28 ignores the registration of cudaMalloc memory
# intra-node, which the stand-in traces), 2 puts them in a symmetric window,
# each deregistered before the communicator is destroyed and freed after,
# by the stand-in's trace; every collective verified, and under -R 2 the
# half and bfloat16 reductions, which the stand-in then accumulates in
# float as NCCL's symmetric kernels do, verified by the same rule; a
# library too old for the mode refused before anything is measured; the
# stand-in's VIOLATION for each misuse of the calls. Buffers come from
# ncclMemAlloc at -R 0 too, from cudaMalloc before NCCL 2.19 with a note;
# the preamble, CSV and JSON say which allocator and registration.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
standin_setup 4 python trace

# count NAME RANK: lines of that rank's trace starting with NAME.
count() {
    grep -c "^$1" "$CB_TMP/trace.$2" || true
}

# -R 1 and -R 2 over every collective, verified.
for level in 1 2; do
    fresh_trace
    run 3 --backend nccl -o all -d float,int32 -r 1 -b 48 -e 768 -f 4 -n 2 -c 1 -R "$level" \
        --csv "$CB_TMP/r$level.csv" --json "$CB_TMP/r$level.json"
    expect_rc 0 "-R $level over every collective"
    check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/r$level.csv" --ranks 3 \
        --sizes 48,192,768 --collective all --dtypes float,int32 --roots 1 \
        --unavailable ring_allreduce
    standin_check trace --prefix "$CB_TMP/trace" --ranks 3 --teardown destroy
    "$CB_PYTHON" -c 'import json, sys
assert json.load(open(sys.argv[1]))["parameters"]["registration"] == int(sys.argv[2])' \
        "$CB_TMP/r$level.json" "$level" || show_and_fail "JSON registration is not $level"
    # Every key of the NCCL backend's document: null, never "", for what is
    # unknown; floats rounded to 6 significant digits.
    check check-json-values --json "$CB_TMP/r$level.json"
    for r in 0 1 2; do
        if [ "$level" = 1 ]; then
            reg=$(count "ncclCommRegister bytes" $r) dereg=$(count ncclCommDeregister $r)
        else
            reg=$(count "ncclCommWindowRegister .*flags=1$" $r)
            dereg=$(count ncclCommWindowDeregister $r)
        fi
        mem=$(count ncclMemAlloc $r)
        [ "$(count ncclMemFree $r)" = "$mem" ] || show_and_fail "rank $r: not $mem ncclMemFree"
        [ "$(count "ncclCommRegister ignored" $r)" = 0 ] ||
            show_and_fail "rank $r: -R $level registered memory NCCL ignores"
        [ "$reg" = 2 ] && [ "$dereg" = 2 ] ||
            show_and_fail "rank $r: -R $level registered $reg and deregistered $dereg buffers, not 2"
        [ "$mem" -ge 2 ] || show_and_fail "rank $r: $mem ncclMemAlloc under -R $level"
        # Deregistered before the communicator is destroyed, freed after it.
        awk '/^ncclComm(Window)?Deregister/ { d++ } /^ncclCommDestroy/ { ok = d == 2; gone = 1 }
            /^(ncclMemFree|cudaFree)/ && !gone { early = 1 } END { exit !(ok && !early) }' \
            "$CB_TMP/trace.$r" || show_and_fail "rank $r: -R $level teardown out of order"
    done
    has 1 "^# -R $level: buffers from ncclMemAlloc, registered "
    "$CB_PYTHON" - "$CB_TMP/r$level.csv" "$CB_TMP/r$level.json" "$level" <<'PY' ||
import csv, json, sys
want = "ncclCommRegister" if sys.argv[3] == "1" else "window"
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert rows and all(r["allocator"] == "ncclMemAlloc" and r["registration"] == want
                    for r in rows), rows[0]
backend = json.load(open(sys.argv[2]))["backend"]
assert backend["allocator"] == "ncclMemAlloc" and backend["registration"] == want, backend
assert backend["repeat_compare"] is None, backend   # no -B
PY
        show_and_fail "-R $level: the CSV or JSON does not name ncclMemAlloc and $want"
done
echo "ok: -R 1 and -R 2 register, deregister, free"

# -R 0: buffers and scratch from ncclMemAlloc too (every cudaMalloc is one of
# ncclMemAlloc's), not registered; before NCCL 2.19, cudaMalloc with a note.
for case in "22809 ncclMemAlloc" "21805 cudaMalloc"; do
    set -- $case
    fresh_trace
    CB_STANDIN_NCCL_VERSION=$1 run 2 --backend nccl -o allreduce,alltoall -b 48 -e 48 -n 1 \
        --csv "$CB_TMP/r0.csv"
    expect_rc 0 "-R 0 at $1"
    has 1 "^# buffers from $2, not registered (-R 0)"
    standin_check trace --prefix "$CB_TMP/trace" --ranks 2 --teardown destroy
    mem=$(count ncclMemAlloc 0)
    if [ "$2" = ncclMemAlloc ]; then
        [ "$mem" -ge 3 ] && [ "$mem" = "$(count "cudaMalloc " 0)" ] ||
            show_and_fail "-R 0: $mem ncclMemAlloc for $(count "cudaMalloc " 0) device allocations"
    else
        [ "$mem" = 0 ] || show_and_fail "ncclMemAlloc called at NCCL 2.18"
        has 1 "^# buffers from cudaMalloc: NCCL 2.18.5 has no ncclMemAlloc"
    fi
    "$CB_PYTHON" - "$CB_TMP/r0.csv" "$2" <<'PY' || show_and_fail "-R 0: the CSV does not name $2"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert rows and all(r["allocator"] == sys.argv[2] and r["registration"] == "none"
                    for r in rows), rows[0]
PY
done
echo "ok: -R 0 from ncclMemAlloc, cudaMalloc before 2.19"

# -R 2 with half and bfloat16 reductions: the stand-in accumulates in
# float. The verification values are small integers (powers of two for
# prod) whose every partial result is exact in the element type, so float
# accumulation gives the same bits; avg keeps its premultiplied tolerance,
# which bounds float accumulation too (see nccl-collbench-collectives(7)).
for np in 3 4; do
    fresh_trace
    run "$np" --backend nccl -o allreduce,reducescatter,reduce -d half,bfloat16 --redop all \
        -r 0 -b 64 -e 4K -f 8 -n 1 -c 2 -R 2 --csv "$CB_TMP/h.csv"
    expect_rc 0 "-R 2 half and bfloat16 reductions on $np ranks"
    check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/h.csv" --ranks "$np" \
        --sizes 64,512,4096 --collective allreduce,reducescatter,reduce \
        --dtypes half,bfloat16 --redops all --roots 0 --passes 2
    standin_check trace --prefix "$CB_TMP/trace" --ranks "$np" --teardown destroy
    [ "$(count "symmetric window: accumulating in float" 0)" -gt 0 ] ||
        show_and_fail "the stand-in never accumulated in float under -R 2"
done
fresh_trace
run 2 --backend nccl -o allreduce -d half -b 64 -e 64 -n 1 -R 1
expect_rc 0 "-R 1 half"
[ "$(count "symmetric window" 0)" = 0 ] || show_and_fail "float accumulation without a window"
echo "ok: -R 2 half and bfloat16 reductions verified"

# NCCL says yes and registers nothing (docs/design/nccl-contract.md,
# ncclCommRegister and ncclCommWindowRegister): a NULL handle with
# NCCL_LOCAL_REGISTER=0 from 2.24; no window without symmetric memory
# support (CB_STANDIN_SYMMETRIC=0) from 2.29 (NULL), or with
# NCCL_LOCAL_REGISTER=0 at 2.27 (NULL) and 2.28 (left unwritten). The run
# verifies every collective on the unregistered buffers, never deregisters
# or frees them early, and says once that they ran unregistered. Where NCCL
# does register (2.23 ignores the variable; 2.28 without symmetric support
# registers locally) the backend says nothing and deregisters each one.
for case in "1 22809 LOCAL=0 none" "1 22304 LOCAL=0 made" "2 22902 SYM=0 none" \
    "2 22809 SYM=0,LOCAL=0 none" "2 22703 LOCAL=0 none" "2 22809 SYM=0 made"; do
    set -- $case
    local_register=1 symmetric=1
    case $3 in *LOCAL=0*) local_register=0 ;; esac
    case $3 in *SYM=0*) symmetric=0 ;; esac
    fresh_trace
    NCCL_LOCAL_REGISTER=$local_register CB_STANDIN_SYMMETRIC=$symmetric \
        CB_STANDIN_NCCL_VERSION=$2 run 3 --backend nccl -o allreduce,allgather,reduce \
        -d float,half -b 64 -e 256 -f 4 -n 2 -c 1 -R "$1" --csv "$CB_TMP/n.csv"
    expect_rc 0 "-R $1 at $2 with $3"
    check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/n.csv" --ranks 3 --sizes 64,256 \
        --collective allreduce,allgather,reduce --dtypes float,half --roots 0
    standin_check trace --prefix "$CB_TMP/trace" --ranks 3 --teardown destroy
    notices=$(grep -c "^# -R $1: .* registered nothing (.*): the buffers run unregistered" \
        "$CB_TMP/out" || true)
    for r in 0 1 2; do
        if [ "$1" = 1 ]; then
            skipped=$(count "ncclCommRegister skipped: NCCL_LOCAL_REGISTER=0" $r)
            dereg=$(count ncclCommDeregister $r)
        else
            skipped=$(count "ncclCommWindowRegister made no window" $r)
            dereg=$(count ncclCommWindowDeregister $r)
        fi
        if [ "$4" = none ]; then
            [ "$skipped" = 2 ] && [ "$dereg" = 0 ] && [ "$notices" = 1 ] ||
                show_and_fail "rank $r, -R $1 at $2 with $3: $skipped registrations made" \
                    "nothing, $dereg deregistered, $notices notices (want 2, 0, 1)"
        else
            [ "$skipped" = 0 ] && [ "$dereg" = 2 ] && [ "$notices" = 0 ] ||
                show_and_fail "rank $r, -R $1 at $2 with $3: $skipped registrations made" \
                    "nothing, $dereg deregistered, $notices notices (want 0, 2, 0)"
        fi
    done
    [ "$(count "symmetric window: accumulating in float" 0)" = 0 ] ||
        show_and_fail "-R $1 at $2 with $3: float accumulation without a symmetric window"
done
echo "ok: NULL handles and windows run unregistered, said once"

# A library too old for the mode: status 1 before anything is measured.
for case in "2 22605 2.27" "1 21805 2.19"; do
    set -- $case
    fresh_trace
    CB_STANDIN_NCCL_VERSION=$2 run 2 --backend nccl -b 48 -e 48 -n 1 -R "$1"
    expect_rc 1 "-R $1 at version $2"
    one_message "-R $1 needs"
    grep -qF "NCCL $3 or later" "$CB_TMP/err" || show_and_fail "-R $1: no version named"
    grep -q 'Collective:' "$CB_TMP/out" && show_and_fail "-R $1 at $2: something was measured"
    standin_check trace --prefix "$CB_TMP/trace" --ranks 2
done
echo "ok: old libraries refused"

# The stand-in flags each misuse of the calls (tests/nccl/standin/misuse_register.c).
misuse="$CB_BUILDDIR/tests/misuse-register-standin"
[ -x "$misuse" ] || fail "$misuse was not built"
for case in "deregister-twice:ncclCommDeregister of a handle that is not registered" \
    "free-registered:cudaFree of memory still registered (ncclCommRegister)" \
    "free-window:ncclMemFree of memory still registered (ncclCommWindowRegister)" \
    "window-on-cudamalloc:ncclCommWindowRegister on memory that ncclMemAlloc did not return" \
    "window-deregister-twice:ncclCommWindowDeregister of a window that is not registered" \
    "cudafree-memalloc:cudaFree of memory from ncclMemAlloc" \
    "destroy-registered:ncclCommDestroy with 1 buffer registrations or windows left" \
    "none:"; do
    fresh_trace
    CB_RUN_BIN=$misuse run 1 "${case%%:*}"
    expect_rc 0 "misuse ${case%%:*}"
    if [ -z "${case#*:}" ]; then
        ! grep -q VIOLATION "$CB_TMP/trace.0" || show_and_fail "a VIOLATION without a misuse"
    else
        grep -qF "VIOLATION ${case#*:}" "$CB_TMP/trace.0" ||
            show_and_fail "misuse ${case%%:*}: no VIOLATION '${case#*:}'"
    fi
done
fresh_trace
CB_STANDIN_NCCL_VERSION=22605 CB_RUN_BIN=$misuse run 1 free-window
grep -qF "VIOLATION ncclCommWindowRegister called, but the library reports version 22605" \
    "$CB_TMP/trace.0" || show_and_fail "a window call at 2.26.5 was not flagged"
# The native collectives are absent below 2.28 too (standin/nccl_native.c).
fresh_trace
CB_STANDIN_NCCL_VERSION=22703 CB_RUN_BIN=$misuse run 1 native
grep -qF "VIOLATION ncclAlltoAll called, but the library reports version 22703" \
    "$CB_TMP/trace.0" || show_and_fail "ncclAlltoAll at 2.27.3 was not flagged"
fresh_trace
CB_RUN_BIN=$misuse run 1 native
! grep -q VIOLATION "$CB_TMP/trace.0" || show_and_fail "ncclAlltoAll at 2.28 was flagged"
# ncclCommRegister of cudaMalloc memory: accepted, traced as ignored.
fresh_trace
CB_RUN_BIN=$misuse run 1 deregister-twice
grep -q "^ncclCommRegister ignored: memory not from ncclMemAlloc" "$CB_TMP/trace.0" ||
    show_and_fail "registering cudaMalloc memory was not traced as ignored"
echo "ok: misuse flagged"
echo "ok"
