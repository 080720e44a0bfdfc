import socket, sys, os, time, threading
n = int(sys.argv[1]) if len(sys.argv) > 1 else 1
ls = socket.socket(); ls.bind(("127.0.0.1", 0)); ls.listen(); port = ls.getsockname()[1]
if os.fork() == 0:
    s = socket.create_connection(("127.0.0.1", port)); buf = bytearray(1 << 20); v = memoryview(buf)
    t = time.time(); tot = 0
    while True:
        k = s.recv_into(v)
        if not k: break
        tot += k
    print("lo: %.0f MiB/s" % (tot / 1048576 / (time.time() - t)), flush=True); os._exit(0)
c, _ = ls.accept(); data = os.urandom(1 << 20) * 1
end = time.time() + float(sys.argv[2] if len(sys.argv) > 2 else 5)
while time.time() < end: c.sendall(data)
c.close(); os.wait()
