# The communicator calls the backend makes at each NCCL version, through
# the CPU stand-in reporting that version (CB_STANDIN_NCCL_VERSION): the
# "Versions" column of docs/design/nccl-contract.md. Before 2.14 there is
# no ncclConfig_t, so every communicator is made blocking and nothing
# returns ncclInProgress; ncclCommSplit is called only from 2.18,
# ncclCommShrink only from 2.27 (comm_init's split and shrink rows, a note
# where the library lacks them), ncclMemAlloc only from 2.19. How the
# run's own communicators are made from 2.14 on (issue 35, section 3) is
# not asserted. The stand-in serves every call at every version, so a
# backend calling one that the reported library lacks passes every other
# test: here the trace shows it. Each run is verified, and the trace has
# no VIOLATION and nothing left alive (standin_check).
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
standin_setup 3 python trace

# count CALL RANK: lines of RANK's trace that are CALL or begin with CALL
# and a space.
count() {
    grep -c -e "^$1\$" -e "^$1 " "$CB_TMP/trace.$2" || true
}

# expect_calls VERSION CALL WANT: every rank traced CALL WANT times (a
# number), or at least once (any), or never (0); the excluded last rank of
# comm_init's shrink is told apart by the caller.
expect_calls() {
    for r in 0 1 2; do
        got=$(count "$2" "$r")
        case $3 in
        any) [ "$got" -gt 0 ] || show_and_fail "$1: rank $r never called $2" ;;
        *) [ "$got" = "$3" ] || show_and_fail "$1: rank $r called $2 $got times, expected $3" ;;
        esac
    done
}

# Each line: version code, text, splits, shrinks (all ranks but the last),
# ncclMemAlloc: 0, any (at least one) or a count.
while read -r code text splits shrinks memalloc; do
    fresh_trace
    CB_STANDIN_NCCL_VERSION=$code run 3 --backend nccl -o allreduce,alltoall,comm_init \
        -b 48 -e 192 -f 4 -n 2 -w 1
    expect_rc 0 "NCCL $text"
    grep -q "^# backend: nccl (NCCL $text)" "$CB_TMP/out" ||
        show_and_fail "NCCL $text: the preamble does not name the library's version"
    has 1 "^# Out of bounds values : 0 OK"
    standin_check trace --prefix "$CB_TMP/trace" --ranks 3 --teardown destroy
    if [ "$code" -lt 21400 ]; then
        for r in 0 1 2; do
            modes=$(grep '^ncclCommInitRank ' "$CB_TMP/trace.$r" |
                sed 's/.* blocking=\([01]\) .*/\1/' | sort -u | tr -d '\n')
            [ "$modes" = 1 ] ||
                show_and_fail "NCCL $text: rank $r made communicators with blocking=$modes, not 1"
        done
        expect_calls "NCCL $text" ncclInProgress 0
    fi
    expect_calls "NCCL $text" ncclCommSplit "$splits"
    for r in 0 1; do
        got=$(count ncclCommShrink "$r")
        [ "$got" = "$shrinks" ] ||
            show_and_fail "NCCL $text: rank $r called ncclCommShrink $got times, expected $shrinks"
    done
    [ "$(count ncclCommShrink 2)" = 0 ] || show_and_fail "NCCL $text: the excluded rank shrank"
    expect_calls "NCCL $text" ncclMemAlloc "$memalloc"
    for spec in "split ncclCommSplit 2.18 $splits" "shrink ncclCommShrink 2.27 $shrinks"; do
        set -- $spec
        if [ "$4" = 0 ]; then
            has 1 "^# comm_init $1 skipped: NCCL $text has no $2 ($3 or later needed)"
        else
            grep -Eq "^ +0 +0 +- +$1 +-1 +[0-9.]+ " "$CB_TMP/out" ||
                show_and_fail "NCCL $text: no comm_init $1 row"
        fi
    done
    echo "ok: NCCL $text"
done <<'VERSIONS'
21304 2.13.4 0 0 0
21701 2.17.1 0 0 0
21801 2.18.1 any 0 0
22605 2.26.5 any 0 any
22703 2.27.3 any 3 any
VERSIONS
echo "ok"
