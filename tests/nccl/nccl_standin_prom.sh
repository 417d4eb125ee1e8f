# --prom on the NCCL backend through the CPU stand-in: the info series
# names the NCCL library's version (nccl_version) and the backend's
# versions, and the result series equal the CSV's rows label by label,
# native and send/receive alltoall told apart by their impl label.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
standin_setup 2 python
CHECK="$CB_SRCDIR/tests/support/prom_check.py"

run 2 --backend nccl -o allreduce,alltoall --nccl-impl native,p2p -b 8 -e 4K -f 8 -n 3 \
    --csv "$CB_TMP/n.csv" --prom "$CB_TMP/n.prom"
expect_rc 0 "--prom on the nccl backend"
"$CB_PYTHON" "$CHECK" lint "$CB_TMP/n.prom" || fail "the file does not read"
"$CB_PYTHON" "$CHECK" results "$CB_TMP/n.prom" "$CB_TMP/n.csv" || fail "the series are not the CSV's"
version=$("$CB_PYTHON" -c 'import csv, sys; print(next(csv.DictReader(open(sys.argv[1])))["library"])' \
    "$CB_TMP/n.csv")
case "$version" in
"NCCL "*) ;;
*) fail "the CSV's library is '$version', not NCCL's" ;;
esac
"$CB_PYTHON" "$CHECK" info "$CB_TMP/n.prom" backend=nccl "library=$version" \
    "nccl_version=${version#NCCL }" || fail "the info series"
grep -q '^nccl_collbench_run_info{.*backend_versions="NCCL library ' "$CB_TMP/n.prom" ||
    fail "no backend_versions on the info series"
grep -q 'impl="p2p"' "$CB_TMP/n.prom" && grep -q 'impl="native"' "$CB_TMP/n.prom" ||
    fail "alltoall's implementations are not told apart"
echo "ok"
