#!/bin/sh
# Quick start, first command: install what is missing, build in _build/, and
# run a verified all-reduce sweep on 2 ranks (the MPI backend where there is
# no GPU).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
sh "$here/install-deps.sh"
sh "$here/build.sh"
if [ "$(id -u)" = 0 ]; then
    # Open MPI refuses to start as root unless told so twice.
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
exec mpirun --oversubscribe -np 2 "$here/../_build/src/nccl-collbench" -o allreduce "$@"
