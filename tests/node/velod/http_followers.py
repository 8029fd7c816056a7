#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Followers of velod's /flows: http_followers.py TARGET COUNT [RELEASE_FILE].

Opens COUNT connections to TARGET (a unix socket path, or HOST:PORT), one after
the other, each asking GET /flows?follow=1, and reads each one's status line.
Prints one line, the statuses counted ("200=16 503=17"; a connection closed or
reset before a status counts as "closed"), then holds every connection open
until RELEASE_FILE exists (60 s at most). Exit 1 when a connect fails.
"""
import os
import socket
import sys
import time


def connect(target):
    if target.startswith("/"):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(10)
        sock.connect(target)
        return sock
    host, port = target.rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=10)


def status(sock):
    sock.sendall(b"GET /flows?follow=1 HTTP/1.0\r\nHost: localhost\r\n\r\n")
    head = b""
    try:
        while b"\r\n" not in head:
            chunk = sock.recv(4096)
            if not chunk:
                break
            head += chunk
    except OSError:
        pass
    fields = head.split(b" ")
    return fields[1].decode() if head.startswith(b"HTTP/") and len(fields) > 1 else "closed"


def main():
    target, count = sys.argv[1], int(sys.argv[2])
    release = sys.argv[3] if len(sys.argv) > 3 else None
    socks, counts = [], {}
    for _ in range(count):
        try:
            sock = connect(target)
        except OSError as err:
            print(f"connect {target}: {err}", flush=True)
            return 1
        code = status(sock)
        counts[code] = counts.get(code, 0) + 1
        socks.append(sock)
    print(" ".join(f"{code}={n}" for code, n in sorted(counts.items())), flush=True)
    deadline = time.monotonic() + 60
    while release and not os.path.exists(release) and time.monotonic() < deadline:
        time.sleep(0.05)
    for sock in socks:
        sock.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
