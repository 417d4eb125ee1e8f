# -R and --nccl-impl on the command line: bad values are usage errors
# (status 2) naming the value; -R 1 and 2 on the mpi backend are usage
# errors naming the backend, on every rank, before anything is measured;
# the options are agreed across ranks.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun

CB_RUN_TIMEOUT=20
for level in 1 2; do
    run 2 --backend mpi -R "$level" -b 8 -e 8 -n 1
    expect_rc 2 "-R $level on the mpi backend"
    n=$(grep -c '^nccl-collbench: ' "$CB_TMP/err")
    [ "$n" = 1 ] || show_and_fail "expected one message, got $n"
    grep -qF -- "-R $level: the mpi backend registers no buffers" "$CB_TMP/err" ||
        show_and_fail "-R $level on mpi: the message does not name the backend"
    grep -q 'Collective:' "$CB_TMP/out" && show_and_fail "-R $level on mpi: something was measured"
done
run 2 --backend mpi -R 0 -b 8 -e 8 -n 1
expect_rc 0 "-R 0 on the mpi backend"

for bad in "-R 3:'3': expected 0, 1 or 2" "-R x:'x': expected 0, 1 or 2" \
    "--local-register=-1:'-1': expected 0, 1 or 2" \
    "--nccl-impl fast:'fast': expected auto, native, p2p" \
    "--nccl-impl native,:'': expected auto, native, p2p" \
    "--nccl-impl auto,auto:'auto' given twice"; do
    # shellcheck disable=SC2086
    run 1 ${bad%%:*} -b 8 -e 8 -n 1
    expect_rc 2 "${bad%%:*}"
    grep -qF -- "${bad#*:}" "$CB_TMP/err" || show_and_fail "${bad%%:*}: no '${bad#*:}'"
done

# Every rank must give the same -R and --nccl-impl.
cat >"$CB_TMP/rank.sh" <<SH
#!/bin/sh
r=\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-\${PMIX_RANK:-x}}}
[ "\$r" = x ] && exit 99
[ "\$r" = 1 ] && exec "$CB_BIN" "\$@" "\$EXTRA"
exec "$CB_BIN" "\$@"
SH
chmod +x "$CB_TMP/rank.sh"
for extra in -R1 --nccl-impl=p2p; do
    EXTRA=$extra
    export EXTRA
    CB_RUN_BIN="$CB_TMP/rank.sh" run 2 --backend mpi -b 8 -e 8 -n 1
    [ "$rc" = 99 ] && { echo "note: the launcher does not say which rank is which"; break; }
    case $extra in -R1) what="-R/--local-register" ;; *) what="--nccl-impl" ;; esac
    expect_rc 2 "$extra on rank 1 only"
    grep -qF -- "$what differs between ranks" "$CB_TMP/err" ||
        show_and_fail "$extra on rank 1 only: no '$what differs between ranks'"
done
echo "ok"
