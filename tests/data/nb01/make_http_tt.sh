#!/bin/sh
# Capture "http_tt": HTTP server with injected futex waits, traced with strace -f -tt -T -y (time of day,
# written in Europe/Berlin local time), an epoch-stamped wait log, hey CSV before and after the fix.
set -e
PY=$(python3 -c "import sys; print(sys.executable)")
cd "$(dirname "$0")"
mkdir -p http_tt && cd http_tt
rm -f port trace.txt waits.csv calls.csv calls_after.csv
TZ=Europe/Berlin strace -f -tt -T -y -o trace.txt \
  "$PY" -S ../make_capture.py serve --port-file port --log waits.csv --kinds 150,300,600 --per-kind 8 \
  --requests 150 --seed 3 &
while [ ! -s port ]; do sleep 0.1; done
sleep 3  # idle: the accept loop polls with its 0.5 s timeout
hey -n 150 -c 1 -q 20 -o csv "http://127.0.0.1:$(cat port)/" > calls.csv
wait
rm -f port
python3 ../make_capture.py serve --port-file port --requests 100 &
while [ ! -s port ]; do sleep 0.1; done
hey -n 100 -c 1 -q 20 -o csv "http://127.0.0.1:$(cat port)/" > calls_after.csv
wait
rm -f port
