# gap.py PORT KEY N GAP_US...: GET /KEY on one keep-alive connection, N
# times per gap, sleeping GAP_US between a response's last byte and the
# next request; prints the median and p90 of the time from the request's
# send to the first response byte (the TTFB of goblinctl bench) in us.
import socket, sys, time
port, key, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
s = socket.create_connection(("127.0.0.1", port))
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
req = ("GET /%s HTTP/1.1\r\nHost: x\r\n\r\n" % key).encode()
buf = bytearray(4 << 20)
mv = memoryview(buf)
def one():
    t0 = time.perf_counter_ns()
    s.sendall(req)
    got = s.recv_into(mv)
    t1 = time.perf_counter_ns()
    data = bytes(mv[:got])
    while b"\r\n\r\n" not in data:
        got = s.recv_into(mv)
        data += bytes(mv[:got])
    h, _, rest = data.partition(b"\r\n\r\n")
    cl = [l.split(b":")[1] for l in h.split(b"\r\n")
          if l.lower().startswith(b"content-length")]
    left = int(cl[0]) - len(rest)
    while left > 0:
        left -= s.recv_into(mv)
    return (t1 - t0) / 1000
for g in sys.argv[4:]:
    g = int(g)
    xs = []
    for i in range(n):
        if g:
            time.sleep(g / 1e6)
        xs.append(one())
    xs.sort()
    print("gap_us=%d ttfb_us p50=%.1f p90=%.1f n=%d" %
          (g, xs[len(xs) // 2], xs[int(len(xs) * 0.9)], n))
