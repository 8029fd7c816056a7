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
tcphold ADDR PORT FILE: as tcp with 1 KiB, then waits for FILE to exist and looks at the
  connection without waiting: prints "closed ERRNO-NAME", "eof" or "open".
udptag PORT...: UDP echo servers (dual-stack) that put "PORT " before each reply.
udpmany ADDR PORT N [FILE]: one unconnected socket sends N datagrams, then reads N replies of
  udptag servers: prints "from ADDR PORT via TAG" each; with FILE, waits for it and does it again.
udpdirect VIP PORT ADDR ADDR_PORT: one unconnected socket: sendto VIP, then to ADDR directly;
  prints "from ADDR PORT" for each reply.
fillmap PIN ID: fills the pinned velo_svc_be_v1 with slots of set ID (no service's) until the
  map refuses (E2BIG); prints how many went in.
udpreconnect VIP PORT ADDR ADDR_PORT: one UDP socket connected to VIP, then to ADDR directly;
  after each, prints "peer ADDR PORT" and "from ADDR PORT" of a reply.
dnsloop VIP PORT SECONDS: a DNS-style client: one connected UDP socket, a query every 50 ms to
  udptag servers, each reply printed "via TAG"; a socket error prints "error ERRNO-NAME" and,
  as resolvers do, the client connects again; a query unanswered in 0.3 s prints "timeout".
"""
import ctypes
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


def tcp_exchanged(addr, port):
    """A connection that did one 1 KiB exchange: prints "peer" and "got" lines."""
    sock = socket.socket(family(addr), socket.SOCK_STREAM)
    sock.settimeout(20)
    sock.connect((addr, port))
    show_addr("peer", sock.getpeername())
    sock.sendall(struct.pack("!Q", 1024) + os.urandom(1024))
    print("got", recv_exact(sock, 64).decode(), flush=True)
    return sock


def tcpwait(addr, port, seconds):
    sock = tcp_exchanged(addr, port)
    sock.settimeout(seconds)
    try:
        print("eof" if not sock.recv(1) else "data", flush=True)
    except socket.timeout:
        print("open", flush=True)
    except OSError as err:
        print("closed", errno.errorcode.get(err.errno, str(err)), flush=True)


def wait_file(path):
    for _ in range(1200):
        if os.path.exists(path):
            return
        time.sleep(0.05)
    sys.exit("no " + path)


def tcphold(addr, port, path):
    sock = tcp_exchanged(addr, port)
    wait_file(path)
    sock.setblocking(False)
    try:
        print("eof" if not sock.recv(1) else "data", flush=True)
    except BlockingIOError:
        print("open", flush=True)
    except OSError as err:
        print("closed", errno.errorcode.get(err.errno, str(err)), flush=True)


def udptag(ports):
    def loop(sock, port):
        while True:
            data, peer = sock.recvfrom(65535)
            sock.sendto(b"%d " % port + data, peer)

    for port in ports:
        sock = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.bind(("::", port))
        threading.Thread(target=loop, args=(sock, port), daemon=True).start()
    print("listening", flush=True)
    while True:
        time.sleep(3600)


def udpmany(addr, port, n, path):
    sock = socket.socket(family(addr), socket.SOCK_DGRAM)
    sock.settimeout(5)
    for rnd in range(2 if path else 1):
        if rnd:
            wait_file(path)
        for i in range(n):
            sock.sendto(b"q%d" % i, (addr, port))
        for _ in range(n):
            data, src = sock.recvfrom(65535)
            host = src[0][7:] if src[0].startswith("::ffff:") else src[0]
            print("from %s %d via %s" % (host, src[1], data.split(b" ")[0].decode()), flush=True)


def udpdirect(vip, port, addr, addr_port):
    sock = socket.socket(family(vip), socket.SOCK_DGRAM)
    sock.settimeout(5)
    for dest in ((vip, port), (addr, addr_port)):
        sock.sendto(b"q", dest)
        show_addr("from", sock.recvfrom(65535)[1])


def udpreconnect(vip, port, addr, addr_port):
    sock = socket.socket(family(vip), socket.SOCK_DGRAM)
    sock.settimeout(5)
    for dest in ((vip, port), (addr, addr_port)):
        sock.connect(dest)
        show_addr("peer", sock.getpeername())
        sock.send(b"q")
        show_addr("from", sock.recvfrom(65535)[1])


def dnsloop(vip, port, seconds):
    def connect():
        sock = socket.socket(family(vip), socket.SOCK_DGRAM)
        sock.settimeout(0.3)
        sock.connect((vip, port))
        return sock

    sock, end, n = connect(), time.time() + seconds, 0
    while time.time() < end:
        n += 1
        try:
            sock.send(b"q%d" % n)
            data = sock.recv(65535)
            print("via", data.split(b" ")[0].decode(), flush=True)
        except socket.timeout:
            print("timeout", flush=True)
        except OSError as err:
            print("error", errno.errorcode.get(err.errno, str(err)), flush=True)
            sock.close()
            sock = connect()
        time.sleep(0.05)


def bpf(cmd, attr):
    libc = ctypes.CDLL(None, use_errno=True)
    ret = libc.syscall(321, cmd, ctypes.byref(attr), ctypes.sizeof(attr))
    return ret, ctypes.get_errno()


def fillmap(pin, set_id):
    path = ctypes.create_string_buffer(pin.encode())
    attr = (ctypes.c_uint64 * 4)(ctypes.addressof(path), 0, 0, 0)
    fd, err = bpf(7, attr)  # BPF_OBJ_GET
    if fd < 0:
        sys.exit("BPF_OBJ_GET %s: %s" % (pin, os.strerror(err)))
    key = (ctypes.c_uint32 * 2)(set_id, 0)
    value = (ctypes.c_uint8 * 20)(*([0] * 10 + [0xFF, 0xFF, 192, 0, 2, 1, 0, 80, 0, 0]))
    update = (ctypes.c_uint64 * 4)(fd, ctypes.addressof(key), ctypes.addressof(value), 0)
    while True:
        ret, err = bpf(2, update)  # BPF_MAP_UPDATE_ELEM
        if ret < 0:
            break
        key[1] += 1
    if err != errno.E2BIG:
        sys.exit("BPF_MAP_UPDATE_ELEM: %s" % os.strerror(err))
    print(key[1], flush=True)


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
    elif mode == "tcphold":
        tcphold(args[0], int(args[1]), args[2])
    elif mode == "udptag":
        udptag([int(p) for p in args])
    elif mode == "udpmany":
        udpmany(args[0], int(args[1]), int(args[2]), args[3] if len(args) > 3 else None)
    elif mode == "dnsloop":
        dnsloop(args[0], int(args[1]), float(args[2]))
    elif mode == "udpdirect":
        udpdirect(args[0], int(args[1]), args[2], int(args[3]))
    elif mode == "fillmap":
        fillmap(args[0], int(args[1]))
    elif mode == "udpreconnect":
        udpreconnect(args[0], int(args[1]), args[2], int(args[3]))
    elif mode in ("udp", "udpc"):
        udp(args[0], int(args[1]), mode == "udpc")
    elif mode == "refused":
        refused(args[0], args[1], int(args[2]))
    else:
        sys.exit("unknown mode " + mode)


if __name__ == "__main__":
    main()
