#!/bin/sh
# Runs each Check test binary given, from the repository root, and prints one
# closing line "N passed, N failed" over all of them.  Fails if any test failed,
# if a binary crashed, or if a test left a shmam segment behind.
set -u
cd "$(dirname "$0")/.." || exit 1
export CK_DEFAULT_TIMEOUT="${CK_DEFAULT_TIMEOUT:-120}"
passed=0 failed=0 broken=""
shm_before=$(ls /dev/shm 2>/dev/null | grep -c '^shmam-' || true)
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
shm_after=$(ls /dev/shm 2>/dev/null | grep -c '^shmam-' || true)
if [ "$shm_after" -gt "$shm_before" ]; then
    echo "tests left $((shm_after - shm_before)) shmam segment(s) in /dev/shm:"
    ls /dev/shm | grep '^shmam-'
    failed=$((failed + 1))
fi
[ -n "$broken" ] && echo "did not finish cleanly:$broken"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
