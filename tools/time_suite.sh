#!/usr/bin/env bash
# Times each part of `make test` on this machine and prints them as a table: the set-up, the
# unit tests, nbval natively, nbval with ATEN_CPU_CAPABILITY=default, and the stored build.
# The parts are the Makefile's own targets, run in the order `make test` runs them; a part
# that fails stops the script with its exit code. Timings depend on the machine and on what
# else runs on it, so no document types them: run this instead.
#   bash tools/time_suite.sh
set -euo pipefail
cd "$(dirname "$0")/.."
parts=("set-up:.venv/.installed" "unit:unit" "nbval (native):nbval" "nbval (ATEN_CPU_CAPABILITY=default):nbval-default" "stored build:stored-build")
declare -a rows
total=0
for part in "${parts[@]}"; do
    name=${part%%:*}; target=${part#*:}
    t0=$(date +%s)
    if [ "$target" = nbval-default ]; then
        ATEN_CPU_CAPABILITY=default make --no-print-directory nbval >/dev/null
    else
        make --no-print-directory "$target" >/dev/null
    fi
    dt=$(( $(date +%s) - t0 )); total=$(( total + dt ))
    rows+=("$(printf '| %s | %d min %02d s |' "$name" $((dt / 60)) $((dt % 60)))")
done
echo "| part of make test | wall time on $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //') |"
echo "| --- | --- |"
printf '%s\n' "${rows[@]}"
printf '| all | %d min %02d s |\n' $((total / 60)) $((total % 60))
