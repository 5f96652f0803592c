#!/bin/sh
# fuzz.sh - `make fuzz`: builds each libFuzzer target tests/fuzz_NAME.c with clang
# under AddressSanitizer and UndefinedBehaviorSanitizer (runtime, lock, heap and
# SPSC ring sources compiled in), and runs each of its modes (the target lists
# them: --list-modes) for FUZZ_SECONDS seconds (60 by default), in build-fuzz
# or FUZZ_BUILD.
#
# Seeds come from tests/fuzz/corpus/NAME, which is only read, and from the
# target itself (--write-seeds=DIR, into build-fuzz/seeds/NAME: images of the
# current layout, never stale after a layout change); what the fuzzer learns goes
# to a scratch corpus in build-fuzz/corpus/NAME/MODE, and anything it finds
# (crash-*, leak-*, timeout-*, oom-*) to build-fuzz/findings/NAME/MODE/.
# Replay one with: build-fuzz/fuzz_NAME --mode=MODE FILE.  Exits 1 if any run
# found something.  Installs Debian's clang (and its libFuzzer) if missing.
set -e
B=${FUZZ_BUILD:-build-fuzz} # another directory: FUZZ_BUILD=dir scripts/fuzz.sh
SECS=${FUZZ_SECONDS:-60}
CFLAGS="-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
-fno-omit-frame-pointer -g -O1 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter \
-pthread -Iinclude -Iruntime -Ilocks -Iheap -Ispsc"
LIBS="-latomic_ops -lrt -pthread"
mkdir -p "$B"

# Does clang link a libFuzzer program here?
fuzzer_links() {
    command -v clang >/dev/null 2>&1 || return 1
    printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return 0; }\n' >"$B/probe.c"
    clang -fsanitize=fuzzer "$B/probe.c" -o "$B/probe" >/dev/null 2>&1
}

if ! fuzzer_links; then
    if [ "$(id -u)" != 0 ]; then
        echo "fuzz.sh: clang with libFuzzer is missing; please run: apt-get install clang libclang-rt-dev" >&2
        exit 1
    fi
    echo "fuzz.sh: installing clang and libFuzzer"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends clang libclang-rt-dev >/dev/null
    fuzzer_links || { echo "fuzz.sh: clang -fsanitize=fuzzer still does not link" >&2; exit 1; }
fi

SRC=$(echo runtime/*.c locks/*.c heap/*.c spsc/*.c)
status=0
for t in tests/fuzz_*.c; do
    name=$(basename "$t" .c)
    bin="$B/$name"
    # Rebuild when any source or header is newer than the binary.
    if [ ! -x "$bin" ] || [ -n "$(find "$t" runtime locks heap spsc -newer "$bin" -name '*.[ch]' | head -1)" ]; then
        echo "fuzz.sh: building $bin"
        # shellcheck disable=SC2086
        clang $CFLAGS "$t" $SRC -o "$bin" $LIBS
    fi
    seeds="tests/fuzz/corpus/${name#fuzz_}"
    fresh="$B/seeds/$name"
    rm -rf "$fresh" && mkdir -p "$fresh" && "$bin" --write-seeds="$fresh"
    for mode in $("$bin" --list-modes); do
        corpus="$B/corpus/$name/$mode"
        found="$B/findings/$name/$mode"
        log="$B/logs/$name-$mode.log"
        mkdir -p "$corpus" "$found" "$(dirname "$log")"
        echo "fuzz.sh: $name --mode=$mode for ${SECS}s (log $log)"
        if "$bin" --mode="$mode" -max_total_time="$SECS" -timeout=5 -rss_limit_mb=2048 \
            -print_final_stats=1 -artifact_prefix="$found/" "$corpus" "$seeds" "$fresh" >"$log" 2>&1; then
            grep -E '^#[0-9]+[[:space:]]+DONE|^Done ' "$log" | sed "s/^/  $name $mode: /"
        else
            status=1
            echo "  $name $mode: FOUND something; see $log" >&2
            grep -E '^#[0-9]+' "$log" | tail -1 | sed 's/^/    /' >&2
            grep -E '^==[0-9]+==ERROR|^fuzz_[a-z_]+:|runtime error:|^SUMMARY|ALARM|Test unit written' "$log" |
                head -5 | sed 's/^/    /' >&2
        fi
    done
done
exit $status
