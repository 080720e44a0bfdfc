import re, statistics, sys
def grab(path):
    t = open(path).read()
    row = lambda pat: re.search(pat, t)
    d = {}
    m = row(r"embedded read \| ([\d.]+) \(([\d.]+) vs ([\d.]+) MiB/s\)"); d["seq_r_emb"], d["seq_mount"], d["seq_emb"] = map(float, m.groups())
    m = row(r"same >= 80% of `fio --direct=1` on the same file system \| ([\d.]+) \(([\d.]+) vs ([\d.]+)"); d["seq_r_fio"], _, d["seq_fio"] = map(float, m.groups())
    m = row(r"median < 100 us \| ([\d.]+) us \(ext4 after drop_caches: ([\d.]+) us\)"); d["first4k"], d["first4k_ext4"] = map(float, m.groups())
    m = row(r"sequential bandwidth \(fio, 8 jobs over 8 such files\) \| ([\d.]+) \(([\d.]+) vs ([\d.]+)"); d["par_r"], d["par_mount"], d["par_fio8"] = map(float, m.groups())
    m = row(r"replayed as file reads \| ([\d.]+) MiB/s, TTFB p50 ([\d.]+) us \(ext4 ([\d.]+) MiB/s, ([\d.]+) us\)"); d["web"], d["web_ttfb"], d["web_ext4"], d["web_ext4_ttfb"] = map(float, m.groups())
    m = row(r"\*\*([\d.]+) MiB/s\*\*, ([\d.]+) files/s"); d["web_copyin"], d["web_files_s"] = map(float, m.groups())
    m = row(r"\| 1 \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|"); d["seq_copyin"] = float(m.group(8))
    m = row(r"git: (\S+)"); d["git"] = m.group(1)
    m = row(r"loadavg at the end: (\S+ \S+ \S+)"); d["load_end"] = m.group(1)
    return d
keys = ["seq_mount","seq_emb","seq_r_emb","seq_fio","seq_r_fio","seq_copyin","first4k","first4k_ext4","par_mount","par_fio8","par_r","web","web_ttfb","web_ext4","web_copyin","web_files_s"]
# sum.py [DIR [N [A_NAME B_NAME]]]: the reports DIR/A1.md ... DIR/BN.md
d = sys.argv[1] if len(sys.argv) > 1 else "/tmp/b20"
N = range(1, (int(sys.argv[2]) if len(sys.argv) > 2 else 6) + 1)
an, bn = sys.argv[3:5] if len(sys.argv) > 4 else ("h20-rest (A1 ... A6)", "731cc94 (B1 ... B6)")
A = [grab("%s/A%d.md" % (d, i)) for i in N]
B = [grab("%s/B%d.md" % (d, i)) for i in N]
print("| figure | %s | %s | median A | median B | A / B |" % (an, bn))
print("|---|---|---|---|---|---|")
for k in keys:
    a = [x[k] for x in A]; b = [x[k] for x in B]
    ma, mb = statistics.median(a), statistics.median(b)
    f = lambda v: ("%.1f" % v) if v >= 10 else ("%.3f" % v)
    print("| %s | %s | %s | %s | %s | %.3f |" % (k, " / ".join(map(f, a)), " / ".join(map(f, b)), f(ma), f(mb), ma / mb))
print("per-pair ratios (A_i / B_i), median:")
for k in keys:
    r = [A[i][k] / B[i][k] for i in range(len(A))]
    print(k, " ".join("%.3f" % x for x in r), "median %.3f" % statistics.median(r))
for n, x in zip(["A%d" % i for i in N] + ["B%d" % i for i in N], A + B):
    print(n, x["git"], x["load_end"])
