import os, random, sys
random.seed(1)
d = "/tmp/ra_capture_files"
paths = [f"{d}/f{i}.bin" for i in range(20)]
if sys.argv[1] == "make":
    os.makedirs(d, exist_ok=True)
    for p in paths:
        with open(p, "wb") as f: f.write(os.urandom(256 * 1024))
    os.sync()
    for p in paths:
        fd = os.open(p, os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)
elif sys.argv[1] == "read":
    for p in paths:
        fd = os.open(p, os.O_RDONLY); os.pread(fd, 64, 0); os.pread(fd, 64, random.randrange(0, 256*1024)); os.close(fd)
else:
    for p in paths: os.unlink(p)
    os.rmdir(d)
