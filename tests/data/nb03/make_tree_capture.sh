#!/usr/bin/env bash
# Tiny random reads on files of one filesystem, with counter snapshots in the folder-tree layout
# <host>/<ts>/<path>: /proc/diskstats, /proc/vmstat, /proc/net/dev, the reader's /proc/<pid>/io and
# the device's read_ahead_kb, one snapshot before the reads and one after each round.
#
# Usage (root, to drop the page cache): make_tree_capture.sh DIR OUT [DEVICE] [ROUNDS] [READ_BYTES]
#   DIR         folder on the filesystem under test (files are created in DIR/nb03-files and removed)
#   OUT         output folder of the snapshot tree
#   DEVICE      major:minor of DIR's device, for /sys/class/bdi/DEVICE/read_ahead_kb (default: from stat)
#   ROUNDS      rounds of reads (default 4); READ_BYTES: bytes per read (default 64)
set -euo pipefail
dir=$1; out=$2; dev=${3:-}; rounds=${4:-4}; want=${5:-64}
files=$dir/nb03-files
mkdir -p "$files" "$out"
[[ -n $dev ]] || dev=$(stat -c '%Hd:%Ld' "$dir")
for i in $(seq -w 0 31); do head -c 262144 /dev/urandom > "$files/f$i.bin"; done
host=$(hostname -s 2>/dev/null || hostname)
fifo=$(mktemp -u); mkfifo "$fifo"
# the reader: one round of tiny reads at random offsets per line on stdin, then prints "done"
python3 -u -c '
import os, random, sys
rng = random.Random(3)
want = int(sys.argv[2])
fds = [os.open(os.path.join(sys.argv[1], n), os.O_RDONLY) for n in sorted(os.listdir(sys.argv[1]))]
print("ready", flush=True)
for _ in sys.stdin:
    for fd in fds:
        for _ in range(4):
            os.pread(fd, want, rng.randrange(0, 262144 - want))
    print("done", flush=True)
' "$files" "$want" < "$fifo" > "$fifo.out" &
pid=$!
exec 3> "$fifo"
snap() {
  local d; d=$out/$host/$(date +%s.%N)
  mkdir -p "$d/proc/$pid" "$d/sys/class/bdi/$dev"
  cat /proc/diskstats > "$d/proc/diskstats"; cat /proc/vmstat > "$d/proc/vmstat"; cat /proc/net/dev > "$d/proc/net_dev.tmp"
  mkdir -p "$d/proc/net"; mv "$d/proc/net_dev.tmp" "$d/proc/net/dev"
  cat "/proc/$pid/io" > "$d/proc/$pid/io"; cat "/sys/class/bdi/$dev/read_ahead_kb" > "$d/sys/class/bdi/$dev/read_ahead_kb"
}
until grep -q ready "$fifo.out" 2>/dev/null; do sleep 0.05; done  # the interpreter has started
sync; echo 3 > /proc/sys/vm/drop_caches  # the files' pages (and the interpreter's) leave the cache
snap
for r in $(seq 1 "$rounds"); do
  echo go >&3
  until [[ $(grep -c done "$fifo.out" 2>/dev/null || true) -ge $r ]]; do sleep 0.05; done
  snap
done
exec 3>&-
wait "$pid"
rm -f "$fifo" "$fifo.out"; rm -rf "$files"
echo "snapshots of pid $pid on device $dev in $out/$host"
