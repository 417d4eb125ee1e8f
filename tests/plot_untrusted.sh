. "$CB_SRCDIR/tests/lib.sh"
skip "todo"
