# Stand-ins for Slurm's sinfo and scontrol, for the tests of
# nccl-collbench-health without a cluster (sourced after lib.sh).
#
#   health_stubs         set HEALTH, the tool under test (fail unless built),
#                        and make $CB_TMP/bin/sinfo and $CB_TMP/bin/scontrol:
#                        node NAME's state is the file $CB_TMP/state.NAME,
#                        one line "STATE|REASON" (STATE as scontrol shows
#                        it, e.g. IDLE+DRAIN); scontrol -o show node prints
#                        it, sinfo -o %E prints the reason (or "none"),
#                        scontrol show hostnames A,B,... prints A, B... a line,
#                        scontrol update records its arguments one a line
#                        in $CB_TMP/scontrol.log (then "--") and changes the
#                        file as Slurm would (DRAIN: +DRAIN and the reason;
#                        RESUME: the drain and reason gone)
#   node_set NAME LINE   set NAME's "STATE|REASON"
#   node_get NAME        print it
health_stubs() {
    HEALTH="$CB_BUILDDIR/src/nccl-collbench-health"
    [ -x "$HEALTH" ] || fail "$HEALTH was not built"
    mkdir -p "$CB_TMP/bin" || exit 99
    cat >"$CB_TMP/bin/sinfo" <<STUB
#!/bin/sh
# sinfo -h -N -n NAME -o %E
while [ \$# -gt 0 ]; do
    case "\$1" in -n) name=\$2; shift ;; esac
    shift
done
line=\$(cat "$CB_TMP/state.\$name" 2>/dev/null) || { echo "sinfo: no node \$name" >&2; exit 1; }
why=\${line#*|}
echo "\${why:-none}"
STUB
    cat >"$CB_TMP/bin/scontrol" <<STUB
#!/bin/sh
case "\$1 \$2" in
    "show hostnames")
        echo "\$3" | tr ',' '\n'
        exit 0 ;;
    "-o show")
        line=\$(cat "$CB_TMP/state.\$4" 2>/dev/null) || { echo "scontrol: node \$4 not found" >&2; exit 1; }
        state=\${line%%|*}
        why=\${line#*|}
        echo "NodeName=\$4 Arch=x86_64 CoresPerSocket=16 NodeHostName=\$4 State=\$state ThreadsPerCore=1 Reason=\${why:-(null)} [root@2026-11-27T07:00:00]"
        exit 0 ;;
esac
[ "\$1" = update ] || { echo "scontrol stand-in: \$*" >&2; exit 1; }
shift
for arg; do echo "\$arg"; done >>"$CB_TMP/scontrol.log"
echo "--" >>"$CB_TMP/scontrol.log"
name=""; what=""; why=""
for arg; do
    case "\$arg" in
        NodeName=*) name=\${arg#NodeName=} ;;
        State=*) what=\${arg#State=} ;;
        Reason=*) why=\${arg#Reason=} ;;
    esac
done
line=\$(cat "$CB_TMP/state.\$name")
state=\${line%%|*}
case "\$what" in
    DRAIN) case "\$state" in *+DRAIN*) ;; *) state="\$state+DRAIN" ;; esac
           echo "\$state|\$why" >"$CB_TMP/state.\$name" ;;
    RESUME) echo "\$(echo "\$state" | sed 's/+DRAIN//')|" >"$CB_TMP/state.\$name" ;;
esac
STUB
    chmod +x "$CB_TMP/bin/sinfo" "$CB_TMP/bin/scontrol"
    : >"$CB_TMP/scontrol.log"
}

node_set() {
    printf '%s\n' "$2" >"$CB_TMP/state.$1"
}

node_get() {
    cat "$CB_TMP/state.$1"
}
