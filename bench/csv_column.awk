#!/usr/bin/awk -f
# From nccl-collbench --csv output: "bytes,time_us" for each out-of-place
# row, the columns found by name in the header.
BEGIN { FS = "," }
NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
$col["placement"] == "out-of-place" { print $col["bytes"] "," $col["time_us"] }
