# -M/--memory: the footprint per rank in the preamble, once, from rank 0:
# two buffers of the largest size (more with --layout col), no staging on the host backend, a check
# tile only with checking on, and about 2x the largest message in all.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun

run 2 --backend mpi -b 8 -e 64K -n 2 -M
expect_rc 0 "-M"
line=$(grep '^# Memory per rank:' "$CB_TMP/out") || fail "-M printed no footprint"
[ "$(echo "$line" | wc -l)" = 1 ] || fail "-M printed the footprint more than once"
echo "$line" | grep -q 'send 65536, receive 65536, column work 0, host staging 0, samples [0-9]*, check tile up to [0-9]*; total [0-9]* bytes' ||
    fail "-M: $line"
tile=$(echo "$line" | sed 's/.*check tile up to \([0-9]*\);.*/\1/')
[ "$tile" -le 65536 ] || fail "-M: a check tile of $tile bytes for a 64K message"

run 2 --backend mpi -b 8 -e 64K -n 2 --memory -c 0
expect_rc 0 "--memory -c 0"
grep -q '^# Memory per rank: .*check tile up to 0; total [0-9]* bytes, 2.0[0-9]* x' "$CB_TMP/out" ||
    fail "--memory -c 0: $(grep Memory "$CB_TMP/out")"

run 2 --backend mpi -b 64M -e 64M -n 1 -w 0 -M
expect_rc 0 "-M at 64M"
ratio=$(sed -n 's/^# Memory per rank: .* bytes, \([0-9.]*\) x the largest.*/\1/p' "$CB_TMP/out")
[ -n "$ratio" ] || fail "-M at 64M: no ratio"
awk -v r="$ratio" 'BEGIN { exit !(r <= 2.1) }' || fail "-M at 64M: $ratio x the largest message"

# --layout col adds its work buffers: two of the largest size for alltoall.
run 2 --backend mpi -b 8 -e 64K -n 2 -M --layout col -o allgather,alltoall
expect_rc 0 "-M --layout col"
grep -q '^# Memory per rank: send 65536, receive 65536, column work 131072, ' "$CB_TMP/out" ||
    fail "-M --layout col: $(grep Memory "$CB_TMP/out")"
run 2 --backend mpi -b 8 -e 64K -n 2 -M --layout col -o allgather,allreduce
expect_rc 0 "-M --layout col without alltoall"
grep -q '^# Memory per rank: send 65536, receive 65536, column work 65536, ' "$CB_TMP/out" ||
    fail "-M --layout col without alltoall: $(grep Memory "$CB_TMP/out")"

run 2 --backend mpi -b 8 -e 64K -n 2
expect_rc 0 "without -M"
grep -q 'Memory per rank' "$CB_TMP/out" && fail "the footprint printed without -M"
echo "ok"
