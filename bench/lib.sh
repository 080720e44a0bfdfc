# SPDX-License-Identifier: BSD-3-Clause
# Shared by the benchmark scripts (sourced): the page cache, fio's
# commands, a free port, and the machine for the report.

# drop_caches: start a measurement from an empty page cache (root only;
# fails otherwise, for the caller to decide)
drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# fio_cmds FILE SIZE: fio_write_cmd (a fresh file) and fio_read_cmd (the
# measured sequential O_DIRECT read, 1 MiB blocks, 8 in flight)
fio_cmds() {
	fio_write_cmd=(fio --name=write --filename="$1" --direct=1 --rw=write
		--bs=1M --iodepth=8 --ioengine=io_uring --size="$2"
		--refill_buffers=1 --output-format=json)
	fio_read_cmd=(fio --name=seq --filename="$1" --direct=1 --rw=read
		--bs=1M --iodepth=8 --ioengine=io_uring --size="$2"
		--output-format=json)
}

# free_port: a free TCP port on loopback
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# machine_info DIR ROOT: the machine, DIR's file system and ROOT's commit
machine_info() {
	echo "nproc: $(nproc)"
	echo "uname -r: $(uname -r)"
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
	echo "free -g:"; free -g
	echo "df -h $1:"; df -h "$1"
	echo "fs: $(findmnt -n -o FSTYPE,OPTIONS -T "$1" 2>/dev/null || true)"
	echo "fio: $(fio --version)"
	echo "git: $(git -C "$2" rev-parse --short HEAD 2>/dev/null || echo 'no commit yet') $(git -C "$2" status --porcelain 2>/dev/null | grep -q . && echo '(working tree has uncommitted changes)')"
}
