#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Usage: flip-static-key.py SECONDS

Runs inside the VM (tools/testing/vm/test-code-patching.sh).  Keeps a TCP flow
going over loopback while it flips the kernel's netstamp_needed_key
static key as fast as it can: each UDP socket that asks for SO_TIMESTAMP
enables it and its close disables it again.  Every flip rewrites an
instruction on the receive path, which the flow runs on the other vCPU
at that moment.  Prints "flips N" and exits 0 when the time is up; a
guest that cannot patch its code safely dies in between.
"""

import socket
import sys
import threading
import time

SO_TIMESTAMP = 29	# asm-generic/socket.h; older Pythons lack the name


def sink(srv):
    conn, _ = srv.accept()
    while conn.recv(65536):
        pass


def source(port, until):
    conn = socket.create_connection(("127.0.0.1", port))
    data = b"x" * 1400
    while time.monotonic() < until:
        conn.send(data)
    conn.close()


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    until = time.monotonic() + float(sys.argv[1])
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    threading.Thread(target=sink, args=(srv,), daemon=True).start()
    threading.Thread(target=source, args=(srv.getsockname()[1], until),
                     daemon=True).start()
    flips = 0
    while time.monotonic() < until:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMP, 1)
        s.close()
        flips += 1
        # The disable runs from a workqueue; let it flip the key back.
        time.sleep(0.001)
    print(f"flips {flips}", flush=True)


if __name__ == "__main__":
    main()
