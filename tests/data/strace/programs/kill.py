import os, signal, threading, time
r, w = os.pipe()
def blocked():
    os.read(r, 1)
for _ in range(2):
    threading.Thread(target=blocked, daemon=True).start()
time.sleep(0.1)
pid = os.fork()
if pid == 0:
    time.sleep(5)
    os._exit(0)
os.kill(pid, signal.SIGKILL)
os.waitpid(pid, 0)
os.kill(os.getpid(), signal.SIGKILL)
