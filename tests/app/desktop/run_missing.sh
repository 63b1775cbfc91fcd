#!/bin/sh
# shardscope STORE --run 7 on a store without run 7: exit 1, the run named, no screenshot.
# Arguments: the store to make, shardscope-cli, a Kineto trace to import, shardscope.
store=$1 cli=$2 trace=$3 app=$4
rm -f "$store" "$store.png"
"$cli" import kineto "$trace" --store "$store" >/dev/null || exit 1
out=$("$app" "$store" --run 7 --page measured --screenshot "$store.png" 2>&1)
code=$?
echo "$out"
[ "$code" -eq 1 ] && echo "$out" | grep -q 'has no run 7' && [ ! -e "$store.png" ]
