#!/usr/bin/env bash
# Collect IO counter snapshots into one log in the workbench snapshot-series convention:
#
#   #== snapshot ts=<seconds since epoch> host=<host> path=<file>
#   <the file's text, verbatim>
#
# Read the log with workbench.counters.read_series(LOG).
#
# Usage: scripts/collect_counters.sh [-o LOG] [-i SECONDS] [-n COUNT] [-H HOST] [-p PID]...
#   -o LOG      output log, appended to (default: counters.snapshots)
#   -i SECONDS  seconds between snapshots (default 10)
#   -n COUNT    number of snapshots, 1..100000 (default 7); the script stops by itself
#   -H HOST     host name written in the markers (default: hostname -s)
#   -p PID      also snapshot /proc/PID/io (repeatable; needs ptrace access)
#
# Each snapshot: /proc/net/dev, /proc/vmstat, /proc/diskstats, every
# /sys/class/bdi/*/read_ahead_kb, and the CephFS client metrics under
# /sys/kernel/debug/ceph/*/ (the single 'metrics' file or the 'metrics/' directory;
# needs root and a mounted debugfs) when readable.
set -euo pipefail

out=counters.snapshots
interval=10
count=7
host=$(hostname -s 2>/dev/null || hostname)
pids=()
while getopts "o:i:n:H:p:h" opt; do
  case $opt in
    o) out=$OPTARG ;;
    i) interval=$OPTARG ;;
    n) count=$OPTARG ;;
    H) host=$OPTARG ;;
    p) pids+=("$OPTARG") ;;
    h) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "usage: $0 [-o LOG] [-i SECONDS] [-n COUNT] [-H HOST] [-p PID]..." >&2; exit 2 ;;
  esac
done
if ! [[ $count =~ ^[0-9]+$ ]] || (( count < 1 || count > 100000 )); then
  echo "collect_counters: -n must be an integer in 1..100000, got '$count'" >&2; exit 2
fi
if ! [[ $interval =~ ^[0-9]+([.][0-9]+)?$ ]]; then
  echo "collect_counters: -i must be a number of seconds, got '$interval'" >&2; exit 2
fi
case $host in *" "*|"") echo "collect_counters: host name must be non-empty without spaces" >&2; exit 2 ;; esac

snap() {  # snap PATH: append one marker + the file's text, if readable
  local path=$1 text
  [[ -r $path ]] || return 0
  text=$(cat "$path" 2>/dev/null) || return 0
  printf '#== snapshot ts=%s host=%s path=%s\n%s\n' "$(date +%s.%N)" "$host" "$path" "$text" >> "$out"
}

for ((i = 1; i <= count; i++)); do
  snap /proc/net/dev
  snap /proc/vmstat
  snap /proc/diskstats
  for f in /sys/class/bdi/*/read_ahead_kb; do snap "$f"; done
  for d in /sys/kernel/debug/ceph/*/; do
    [[ -d $d ]] || continue
    if [[ -d ${d}metrics ]]; then
      for f in "${d}"metrics/*; do snap "$f"; done
    else
      snap "${d}metrics"
    fi
  done
  for p in "${pids[@]}"; do snap "/proc/$p/io"; done
  (( i < count )) && sleep "$interval"
done
echo "collect_counters: $count snapshot(s) appended to $out" >&2
