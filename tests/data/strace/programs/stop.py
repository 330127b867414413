import os, signal, time
pid = os.fork()
if pid == 0:
    time.sleep(0.3)
    os._exit(0)
time.sleep(0.05)
os.kill(pid, signal.SIGSTOP)
time.sleep(0.05)
os.kill(pid, signal.SIGCONT)
os.waitpid(pid, 0)
pid = os.fork()
if pid == 0:
    import ctypes
    ctypes.string_at(0)
os.waitpid(pid, 0)
