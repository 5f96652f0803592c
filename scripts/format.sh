#!/bin/sh
# format.sh - the one code style (.clang-format, clang-format 14) over every C
# file: `scripts/format.sh` checks (part of make check: exit 1 naming the files
# that differ), `scripts/format.sh -i` rewrites them (make format).
set -u
cd "$(dirname "$0")/.." || exit 1
files=$(find include runtime locks heap spsc net tools tests bench apps compat -name '*.[ch]' | sort)
if [ "${1:-}" = "-i" ]; then
    # shellcheck disable=SC2086 # paths have no blanks
    exec clang-format -i $files
fi
bad=""
for f in $files; do
    clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad="$bad $f"
done
if [ -n "$bad" ]; then
    echo "format.sh: not in the style of .clang-format (run make format):$bad" >&2
    exit 1
fi
