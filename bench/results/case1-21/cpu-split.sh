#!/usr/bin/env bash
# cpu-split.sh: run beside n10.sh; each CPU's busy share and the threads that used the
# most of it over 5 s of the measured phase (from 7 s after its start)
sleep 7
a0=$(grep '^cpu0 ' /proc/stat); a1=$(grep '^cpu1 ' /proc/stat)
for p in /proc/[0-9]*/task/[0-9]*; do echo "$p $(awk '{print $14+$15, $39}' $p/stat 2>/dev/null) $(cat $p/comm 2>/dev/null)"; done > /tmp/t0.txt
sleep 5
b0=$(grep '^cpu0 ' /proc/stat); b1=$(grep '^cpu1 ' /proc/stat)
for p in /proc/[0-9]*/task/[0-9]*; do echo "$p $(awk '{print $14+$15, $39}' $p/stat 2>/dev/null) $(cat $p/comm 2>/dev/null)"; done > /tmp/t1.txt
for x in "$a0|$b0" "$a1|$b1"; do python3 -c "
import sys;a,b=sys.argv[1].split('|');a=list(map(int,a.split()[1:]));b=list(map(int,b.split()[1:]));d=[y-x for x,y in zip(a,b)];t=sum(d)
print('user %.0f%% sys %.0f%% irq %.0f%% softirq %.0f%% idle %.0f%%'%(100*d[0]/t,100*d[2]/t,100*d[5]/t,100*d[6]/t,100*(d[3]+d[4])/t))" "$x"; done
join <(sort /tmp/t0.txt) <(sort /tmp/t1.txt) | awk '{d=$5-$2; if (d>10) print d, $7, "cpu" $6}' | sort -rn | head -8
