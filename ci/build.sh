#!/bin/sh
# Bootstrap, configure and build in the source tree. Extra arguments go to
# configure.
set -eu
cd "$(dirname "$0")/.."
./autogen.sh >/dev/null
./configure --quiet "$@"
make -j"$(nproc 2>/dev/null || echo 2)" >/dev/null
