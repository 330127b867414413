import threading, time
cond = threading.Condition()
items = []
def consumer(n):
    for _ in range(n):
        with cond:
            while not items:
                cond.wait(timeout=0.5)
            items.pop()
def producer(n):
    for i in range(n):
        time.sleep(0.002)
        with cond:
            items.append(i)
            cond.notify()
ts = [threading.Thread(target=consumer, args=(20,)) for _ in range(2)] + [threading.Thread(target=producer, args=(20,)) for _ in range(2)]
for t in ts: t.start()
for t in ts: t.join()
