import threading, time, os
def worker():
    while True:
        time.sleep(0.01)
threading.Thread(target=worker, daemon=True).start()
r, w = os.pipe()
end = time.time() + 3
while time.time() < end:
    time.sleep(0.05)
