#!/bin/sh
# Runs each Check test binary given, from the repository root, and prints one
# closing line "N passed, N failed" over all of them.  Fails if any test failed
# or a binary crashed.  Leftover segments are each suite's own check: it looks
# only for the names it created (its run prefix, or its launchers' job names),
# so other shmam programs running on the machine meanwhile do not fail it.
set -u
cd "$(dirname "$0")/.." || exit 1
export CK_DEFAULT_TIMEOUT="${CK_DEFAULT_TIMEOUT:-120}"
passed=0 failed=0 broken=""
for t in "$@"; do
    echo "== $t"
    out=$("$t" 2>&1); rc=$?
    printf '%s\n' "$out"
    line=$(printf '%s\n' "$out" | grep -E '^[0-9]+%: Checks: [0-9]+' | tail -n 1)
    if [ -z "$line" ]; then
        broken="$broken $t"; failed=$((failed + 1)); continue
    fi
    checks=$(echo "$line" | sed -E 's/.*Checks: ([0-9]+).*/\1/')
    fails=$(echo "$line" | sed -E 's/.*Failures: ([0-9]+).*/\1/')
    errs=$(echo "$line" | sed -E 's/.*Errors: ([0-9]+).*/\1/')
    bad=$((fails + errs))
    passed=$((passed + checks - bad)); failed=$((failed + bad))
    [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ] && { broken="$broken $t"; failed=$((failed + 1)); }
done
[ -n "$broken" ] && echo "did not finish cleanly:$broken"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
