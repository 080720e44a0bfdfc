. "$(dirname "$0")/../../lib.sh"
f=$1
for r in 1 2 3; do for qd in 1 2 4 8 16; do
fio_huge fio --name=stream --filename=$f --readonly --rw=read --bs=1M --direct=1 --ioengine=io_uring --iodepth=$qd --mem=shmhuge --output-format=json 2>/dev/null | python3 -c 'import json,sys; j=json.load(sys.stdin); print(sys.argv[1], "%.0f" % (j["jobs"][0]["read"]["bw"]/1024), end="  ")' $qd
done; echo; done
