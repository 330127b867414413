#!/bin/sh
# Capture "hlog_only": only latency samples, as an HdrHistogram interval log. A threaded server sleeps
# 100 ms per request and 200 ms in 9 of them; 552 requests from 4 client threads (hdrh's log writer).
set -e
PY=${PY:-../../../../.venv/bin/python}
cd "$(dirname "$0")"
mkdir -p hlog_only && cd hlog_only
rm -f port calls.hlog
"$PY" -S ../make_capture.py serve --threads --port-file port --requests 552 --base-ms 100 --slow 9:200 --seed 5 &
while [ ! -s port ]; do sleep 0.1; done
"$PY" ../make_capture.py hlog --port-file port --out calls.hlog --requests 552 --concurrency 4
wait
rm -f port
