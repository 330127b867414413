import os, socket, tempfile, threading
d = tempfile.mkdtemp(prefix="tricky")
names = ['par) = 3 (x).txt', 'q"uote\\back.txt', 'new\nline.txt', 'ünï cødé ✓.txt',
         'angle<a>b=c.txt', '+++ exited with 0 +++', 'sp ace) = -1 ENOENT (x)']
for n in names:
    p = os.path.join(d, n)
    fd = os.open(p, os.O_CREAT | os.O_WRONLY, 0o644)
    os.write(fd, b'x) = 0 <0.000001>\n+++ exited with 0 +++\n--- SIGCHLD ---\n"q" \\ \t\x00\xff end')
    os.close(fd)
    fd = os.open(p, os.O_RDONLY)
    os.read(fd, 200)
    os.close(fd)
    os.unlink(p)
try:
    os.open(os.path.join(d, 'missing) = 0'), os.O_RDONLY)
except OSError:
    pass
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)
def serve():
    c, _ = srv.accept(); c.sendall(c.recv(100)); c.close()
t = threading.Thread(target=serve); t.start()
cl = socket.create_connection(srv.getsockname()); cl.sendall(b"ping) = 1"); cl.recv(100); cl.close(); t.join(); srv.close()
us = os.path.join(d, "s) = 1.sock")
u = socket.socket(socket.AF_UNIX); u.bind(us); u.listen(1)
c2 = socket.socket(socket.AF_UNIX); c2.connect(us); a, _ = u.accept(); a.send(b"hi"); c2.recv(10)
for s in (a, c2, u): s.close()
os.unlink(us)
os.rmdir(d)
