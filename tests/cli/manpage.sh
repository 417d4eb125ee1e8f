# The man pages lint clean, nccl-collbench(1) documents every option that
# --help lists and stays within 1500 lines, each page has its sections and
# names the others under SEE ALSO, and every reference to a section points
# to the page that holds it.
. "$CB_SRCDIR/tests/support/lib.sh"
mandir="$CB_BUILDDIR/man"
page="$mandir/nccl-collbench.1"
pages="nccl-collbench.1 nccl-collbench-output.5 nccl-collbench-collectives.7
nccl-collbench-nccl-tests.7 nccl-collbench-compare.1 nccl-collbench-plot.1
nccl-collbench-health.1"
for p in $pages; do
    [ -f "$mandir/$p" ] || fail "$mandir/$p was not built"
done
if command -v mandoc >/dev/null 2>&1; then
    for p in $pages; do
        mandoc -Tlint -W warning "$mandir/$p" >"$CB_TMP/lint" 2>&1 ||
            { cat "$CB_TMP/lint"; fail "mandoc -Tlint reports problems in $p"; }
    done
else
    echo "note: mandoc not installed, lint skipped; checking the options only"
fi

# Every page renders at 80 columns without a warning of groff's (a table
# wider than the line, a line it cannot adjust or break).
if command -v groff >/dev/null 2>&1; then
    for p in $pages; do
        groff -ww -t -man -Tutf8 -rLL=80n "$mandir/$p" >/dev/null 2>"$CB_TMP/groff" ||
            fail "groff failed on $p: $(cat "$CB_TMP/groff")"
        [ -s "$CB_TMP/groff" ] && fail "$p at 80 columns: $(head -5 "$CB_TMP/groff")"
    done
else
    echo "note: groff not installed, the 80-column rendering is not checked"
fi

lines=$(wc -l <"$page")
[ "$lines" -le 1500 ] || fail "nccl-collbench.1 has $lines lines, more than 1500: move detail to the section pages"

# has_headings MACRO WHAT PAGE HEADING...: fail unless PAGE has each
# heading of MACRO (SH, SS); has_sections and has_subsections name them.
has_headings() {
    macro=$1 what=$2 p=$3
    shift 3
    for section in "$@"; do
        grep -q "^\.$macro \"*$section\"*\$" "$mandir/$p" || fail "$p lacks $what $section"
    done
}
has_sections() { has_headings SH section "$@"; }
has_subsections() { has_headings SS subsection "$@"; }
has_sections nccl-collbench.1 NAME SYNOPSIS DESCRIPTION OPTIONS 'EXIT STATUS' SIGNALS \
    'LAUNCH MODES' ENVIRONMENT EXAMPLES RECIPES 'DIFFERENCES FROM NCCL-TESTS' 'SEE ALSO'
has_sections nccl-collbench-output.5 NAME DESCRIPTION 'TABLE OUTPUT' STATISTICS \
    'CSV OUTPUT' 'JSON OUTPUT' 'PROMETHEUS OUTPUT' 'SEE ALSO'
has_sections nccl-collbench-collectives.7 NAME DESCRIPTION COLLECTIVES DATATYPES \
    REDUCTIONS BACKENDS VERIFICATION 'SEE ALSO'
has_sections nccl-collbench-nccl-tests.7 NAME DESCRIPTION DIFFERENCES 'SEE ALSO'
has_subsections nccl-collbench-nccl-tests.7 'Their program names' 'Option map'
has_sections nccl-collbench-health.1 NAME SYNOPSIS DESCRIPTION OPTIONS 'EXIT STATUS' EXAMPLES \
    'SEE ALSO'
# nccl-collbench-health(1) documents every option its --help lists.
"$CB_BUILDDIR/src/nccl-collbench-health" --help >"$CB_TMP/health-help" ||
    fail "nccl-collbench-health --help"
for opt in $(grep -oE -- '--[a-z][a-z0-9-]+' "$CB_TMP/health-help" | sort -u); do
    escaped=$(printf '%s' "$opt" | sed 's/-/\\\\-/g')
    grep -qF -- "$opt" "$mandir/nccl-collbench-health.1" ||
        grep -q -- "$escaped" "$mandir/nccl-collbench-health.1" ||
        fail "nccl-collbench-health(1) lacks $opt"
done
# The reference pages name every other page under SEE ALSO; the companion
# tools' pages name at least the main page and the page for nccl-tests users.
for p in $pages; do
    sed -n '/^\.SH SEE ALSO/,$p' "$mandir/$p" | sed 's/\\//g' >"$CB_TMP/seealso"
    case $p in
    nccl-collbench-compare.1 | nccl-collbench-plot.1 | nccl-collbench-health.1)
        others="nccl-collbench.1 nccl-collbench-nccl-tests.7" ;;
    *) others=$pages ;;
    esac
    for other in $others; do
        [ "$other" = "$p" ] && continue
        name=${other%.*}
        grep -q "^\.BR $name (${other##*.})" "$CB_TMP/seealso" || fail "$p: SEE ALSO lacks $other"
    done
done

need_mpirun
run 1 --help
expect_rc 0 "--help"
for opt in $(grep -oE -- '--[a-z][a-z0-9-]+' "$CB_TMP/out" | sort -u); do
    escaped=$(printf '%s' "$opt" | sed 's/-/\\\\-/g')
    grep -qF -- "$opt" "$page" || grep -q -- "$escaped" "$page" || fail "man page lacks $opt"
done

need_python
"$CB_PYTHON" - "$mandir" $pages <<'EOF' || fail "a section reference points to the wrong page"
# A reference is a .B or .BR line whose first word is a section or
# subsection heading. It must be a heading of its own page, or name the page
# that holds it: on the same line ("X" " in " page (n)) or within the next
# six lines (X under Y of page (n)). An option named with a page
# (\-T " in " page (n)) must be an item of that page's lists.
import re, sys
mandir, names = sys.argv[1], sys.argv[2:]
text = {n: open(f"{mandir}/{n}", encoding="utf-8").read().splitlines() for n in names}
heads = {n: {re.sub(r'^\.S[HS] "?(.*?)"?$', r"\1", l) for l in t if re.match(r"\.S[HS] ", l)}
         for n, t in text.items()}
page_ref = re.compile(r'(nccl\\-collbench[a-z\\-]*) \((\d)\)')
bad = 0
for n, t in text.items():
    for i, l in enumerate(t):
        m = re.match(r'\.BR? (?:"([^"]+)"|(\S+))( " in " )?', l)
        if not m:
            continue
        target = m.group(1) or m.group(2)
        holders = [p for p in names if target in heads[p]]
        named = [f"{a.replace(chr(92), '')}.{s}" for a, s in page_ref.findall(" ".join(t[i:i + 7]))]
        if m.group(3) and target.startswith("\\-"):
            # An option: the page named must document it.
            tags = [] if not named or named[0] not in text else \
                [tag for prev, tag in zip(text[named[0]], text[named[0]][1:]) if prev == ".TP"]
            if not any(f"\\fB{target}\\fR" in tag or re.match(rf"\.BI? {re.escape(target)}( |$)", tag)
                       for tag in tags):
                print(f"{n}:{i + 1}: option {target} is not documented in {named[:1]}")
                bad += 1
        elif m.group(3):
            if not named or named[0] not in holders:
                print(f"{n}:{i + 1}: '{target}' is not a section of {named[:1]}")
                bad += 1
        elif holders and target not in heads[n] and not any(p in holders for p in named):
            print(f"{n}:{i + 1}: '{target}' is a section of {', '.join(holders)}, "
                  f"not of this page, and the reference does not say so")
            bad += 1
sys.exit(1 if bad else 0)
EOF
echo "ok"
