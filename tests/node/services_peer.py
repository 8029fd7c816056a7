#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Client and server of tests/node/services.bats.

server TCP_PORT UDP_PORT: dual-stack; TCP: reads an 8-byte length and that many bytes,
  answers their SHA-256 (hex), then waits for the peer to close; UDP: echoes each datagram.
tcp ADDR PORT SIZE [HOLD]: connects, prints "peer ADDR PORT" (getpeername), sends SIZE random
  bytes, prints "sent DIGEST" and "got DIGEST", keeps the connection HOLD seconds.
udp ADDR PORT: unconnected; sendto, recvfrom; prints "from ADDR PORT" and "echo ok|bad".
udpc ADDR PORT: connected UDP; prints "peer ADDR PORT", "from ADDR PORT", "echo ok|bad".
refused tcp|udp ADDR PORT: prints the errno name of connect (tcp) or sendto (udp).
tcpwait ADDR PORT SECONDS: as tcp with 1 KiB, then waits up to SECONDS for the connection to
  end: prints "closed ERRNO-NAME", "eof" or "open" (still open at the end).
"""
import errno
import hashlib
import os
import socket
import struct
import sys
import threading
import time


def family(addr):
    return socket.AF_INET6 if ":" in addr else socket.AF_INET


def recv_exact(conn, n):
    data = bytearray()
    while len(data) < n:
        chunk = conn.recv(min(1 << 16, n - len(data)))
        if not chunk:
            raise EOFError("peer closed after %d of %d bytes" % (len(data), n))
        data += chunk
    return bytes(data)


def serve_tcp(port):
    srv = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    srv.bind(("::", port))
    srv.listen(64)
    return srv


def handle(conn):
    with conn:
        size = struct.unpack("!Q", recv_exact(conn, 8))[0]
        digest = hashlib.sha256()
        left = size
        while left:
            chunk = conn.recv(min(1 << 16, left))
            if not chunk:
                return
            digest.update(chunk)
            left -= len(chunk)
        conn.sendall(digest.hexdigest().encode())
        while conn.recv(4096):
            pass


def server(tcp_port, udp_port):
    srv = serve_tcp(tcp_port)
    udp = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    udp.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    udp.bind(("::", udp_port))

    def udp_loop():
        while True:
            data, peer = udp.recvfrom(65535)
            udp.sendto(data, peer)

    threading.Thread(target=udp_loop, daemon=True).start()
    print("listening", flush=True)
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=handle, args=(conn,), daemon=True).start()


def show_addr(label, addr):
    host = addr[0]
    if host.startswith("::ffff:"):
        host = host[7:]
    print("%s %s %d" % (label, host, addr[1]), flush=True)


def tcp(addr, port, size, hold):
    sock = socket.socket(family(addr), socket.SOCK_STREAM)
    sock.settimeout(20)
    sock.connect((addr, port))
    show_addr("peer", sock.getpeername())
    data = os.urandom(size)
    sock.sendall(struct.pack("!Q", size) + data)
    print("sent", hashlib.sha256(data).hexdigest(), flush=True)
    print("got", recv_exact(sock, 64).decode(), flush=True)
    time.sleep(hold)
    sock.close()


def tcpwait(addr, port, seconds):
    sock = socket.socket(family(addr), socket.SOCK_STREAM)
    sock.settimeout(20)
    sock.connect((addr, port))
    show_addr("peer", sock.getpeername())
    sock.sendall(struct.pack("!Q", 1024) + os.urandom(1024))
    print("got", recv_exact(sock, 64).decode(), flush=True)
    sock.settimeout(seconds)
    try:
        print("eof" if not sock.recv(1) else "data", flush=True)
    except socket.timeout:
        print("open", flush=True)
    except OSError as err:
        print("closed", errno.errorcode.get(err.errno, str(err)), flush=True)


def udp(addr, port, connected):
    sock = socket.socket(family(addr), socket.SOCK_DGRAM)
    sock.settimeout(5)
    query = os.urandom(32)
    if connected:
        sock.connect((addr, port))
        show_addr("peer", sock.getpeername())
        sock.send(query)
    else:
        sock.sendto(query, (addr, port))
    data, src = sock.recvfrom(65535)
    show_addr("from", src)
    print("echo", "ok" if data == query else "bad", flush=True)


def refused(proto, addr, port):
    kind = socket.SOCK_STREAM if proto == "tcp" else socket.SOCK_DGRAM
    sock = socket.socket(family(addr), kind)
    sock.settimeout(5)
    try:
        if proto == "tcp":
            sock.connect((addr, port))
        else:
            sock.sendto(b"x", (addr, port))
        print("no error")
    except OSError as err:
        print(errno.errorcode.get(err.errno, str(err)))


def main():
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "server":
        server(int(args[0]), int(args[1]))
    elif mode == "tcp":
        tcp(args[0], int(args[1]), int(args[2]), float(args[3]) if len(args) > 3 else 0)
    elif mode == "tcpwait":
        tcpwait(args[0], int(args[1]), float(args[2]))
    elif mode in ("udp", "udpc"):
        udp(args[0], int(args[1]), mode == "udpc")
    elif mode == "refused":
        refused(args[0], args[1], int(args[2]))
    else:
        sys.exit("unknown mode " + mode)


if __name__ == "__main__":
    main()
