"""Write hdrh_us_unscaled.hgrm and hdrh_ms_scaled.hgrm from hey.csv's response times (run from this folder)."""
import csv
import io

from hdrh.histogram import HdrHistogram

h = HdrHistogram(1, 60_000_000, 3)
with open("hey.csv") as f:
    for row in csv.DictReader(f):
        h.record_value(round(float(row["response-time"]) * 1e6))  # seconds -> whole us
for name, ratio in (("hdrh_us_unscaled.hgrm", 1.0), ("hdrh_ms_scaled.hgrm", 1000.0)):
    b = io.BytesIO()
    h.output_percentile_distribution(b, ratio)
    with open(name, "wb") as f:
        f.write(b.getvalue())
print(h.get_total_count(), h.get_max_value(), h.get_value_at_percentile(50), h.get_value_at_percentile(99))
