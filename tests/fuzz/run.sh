#!/usr/bin/env bash
# run.sh: build the libFuzzer targets with clang (ASan+UBSan) and run each for a bounded time.
#
#   tests/fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]     (default 60 s, every target)
#
# Each target starts from its seed corpus in tests/fuzz/corpus/<name>/ (read only: new inputs go
# to a scratch corpus in the build dir), with the flags in tests/fuzz/fuzz-<name>.options if any. Any crash, leak or sanitizer report fails the run and
# leaves the input in build-fuzz/artifacts/. The last lines give executions and coverage
# (libFuzzer's cov: edges and ft: features) per target.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-60}
shift || true
build=${FUZZ_BUILD_DIR:-$top/build-fuzz}

if ! command -v clang >/dev/null; then
    echo "fuzz: clang is not installed (bash .ci/deps installs it)" >&2
    exit 1
fi
if [ ! -f "$build/build.ninja" ]; then
    setup_log=$(mktemp)
    if ! CC=clang meson setup "$build" "$top" -Dfuzz=true -Db_sanitize=address,undefined \
            -Db_lundef=false >"$setup_log" 2>&1; then
        cat "$setup_log"
        rm -f "$setup_log"
        exit 1
    fi
    rm -f "$setup_log"
fi
ninja -C "$build" >/dev/null || ninja -C "$build" || exit 1

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    for exe in "$build"/tests/fuzz/fuzz-*; do
        [ -f "$exe" ] && [ -x "$exe" ] && targets+=("${exe##*/fuzz-}")
    done
fi

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
mkdir -p "$build/artifacts"
summary=()
status=0
for t in "${targets[@]}"; do
    exe=$build/tests/fuzz/fuzz-$t
    seeds=$top/tests/fuzz/corpus/$t
    work=$build/corpus/$t
    log=$build/fuzz-$t.log
    opts=()
    [ -f "$top/tests/fuzz/fuzz-$t.options" ] && read -ra opts <"$top/tests/fuzz/fuzz-$t.options"
    mkdir -p "$work"
    echo "fuzz: $t for ${secs}s ${opts[*]}"
    # -rss_limit_mb bounds a runaway allocation; -timeout flags an input that hangs.
    "$exe" -max_total_time="$secs" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$build/artifacts/$t-" "${opts[@]}" "$work" "$seeds" >"$log" 2>&1
    rc=$?
    done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$done_line")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$done_line")
    corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$done_line")
    if [ "$rc" -ne 0 ] || [ -z "$done_line" ]; then
        tail -60 "$log"
        summary+=("$(printf '%-10s FAILED (exit %s; log %s)' "$t" "$rc" "$log")")
        status=1
    else
        summary+=("$(printf '%-10s ok  execs %-10s cov %-6s ft %-6s corpus %s' "$t" "$execs" \
            "$cov" "$ft" "$corp")")
    fi
done
printf '%s\n' "${summary[@]}"
exit $status
