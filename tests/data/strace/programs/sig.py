import os, signal, threading, time
def h(signum, frame):
    pass
signal.signal(signal.SIGALRM, h)
r, w = os.pipe()
signal.setitimer(signal.ITIMER_REAL, 0.05)
def writer():
    time.sleep(0.2)
    os.write(w, b"x")
threading.Thread(target=writer).start()
os.read(r, 1)            # interrupted by SIGALRM: ERESTARTSYS, then retried
signal.setitimer(signal.ITIMER_REAL, 0.05)
time.sleep(0.15)         # clock_nanosleep interrupted: ERESTART_RESTARTBLOCK
os.kill(os.getpid(), signal.SIGUSR1) if False else None
pid = os.fork()
if pid == 0:
    time.sleep(0.05)
    os._exit(3)
os.waitpid(pid, 0)
