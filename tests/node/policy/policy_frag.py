#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Peers of tests/node/policy/policy_frag.bats (fragments, IPv6 extension headers, ICMP errors).

  serve PORT...            UDP and TCP echo servers on each PORT, IPv4 and IPv6; prints
                           "listening", then "got udp PORT LEN" per datagram received
  udp ADDR PORT SIZE [dstopts]
                           one datagram of SIZE bytes from a connected socket; prints "ok"
                           when the same bytes come back, else "short N", "timeout", "refused"
  tcp ADDR PORT [dstopts]  connect, send, read the echo: "ok", "timeout" or "refused"
  forge SRC TARGET         a made-up ICMP port unreachable from SRC to TARGET (raw socket),
                           quoting a UDP datagram TARGET:4444 -> SRC:5555 that never was
  icmp-listen CONTROL CAP  a raw ICMP socket until 3 forged errors from CONTROL arrived (CAP
                           seconds at most): prints "forged SRC N" per source heard

dstopts: the packets carry an IPv6 destination-options header (PadN only).
"""
import select
import socket
import struct
import sys

MARK = b"velo-forged-icmp"
# A destination-options header of 8 bytes: next header and length (0) filled by the kernel's
# layout, then PadN of 4 bytes.
DSTOPTS = bytes([0, 0, 1, 4, 0, 0, 0, 0])
TIMEOUT = 2.0


def family(addr):
    return socket.AF_INET6 if ":" in addr else socket.AF_INET


def with_dstopts(sock, argv):
    if argv and argv[0] == "dstopts":
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_DSTOPTS, DSTOPTS)


def payload(size):
    return bytes((i * 7 + 3) % 251 for i in range(size))


def serve(ports):
    socks = {}
    for port in ports:
        udp = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        udp.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        udp.bind(("::", port))
        tcp = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        tcp.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        tcp.bind(("::", port))
        tcp.listen(16)
        socks[udp] = ("udp", port)
        socks[tcp] = ("tcp", port)
    print("listening", flush=True)
    while True:
        ready, _, _ = select.select(list(socks), [], [])
        for sock in ready:
            kind, port = socks[sock]
            if kind == "udp":
                data, peer = sock.recvfrom(65535)
                print(f"got udp {port} {len(data)}", flush=True)
                sock.sendto(data, peer)
            else:
                conn, _ = sock.accept()
                conn.settimeout(TIMEOUT)
                try:
                    conn.sendall(conn.recv(4096))
                except OSError:
                    pass
                conn.close()


def udp(addr, port, size, argv):
    sock = socket.socket(family(addr), socket.SOCK_DGRAM)
    with_dstopts(sock, argv)
    sock.settimeout(TIMEOUT)
    sock.connect((addr, port))
    data = payload(size)
    sock.send(data)
    try:
        got = sock.recv(65535)
    except socket.timeout:
        return "timeout"
    except ConnectionRefusedError:
        return "refused"
    return "ok" if got == data else f"short {len(got)}"


def tcp(addr, port, argv):
    sock = socket.socket(family(addr), socket.SOCK_STREAM)
    with_dstopts(sock, argv)
    sock.settimeout(TIMEOUT)
    try:
        sock.connect((addr, port))
        sock.sendall(b"velo-tcp")
        got = sock.recv(64)
    except socket.timeout:
        return "timeout"
    except ConnectionRefusedError:
        return "refused"
    return "ok" if got == b"velo-tcp" else f"short {len(got)}"


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    total = (total >> 16) + (total & 0xFFFF)
    total += total >> 16
    return ~total & 0xFFFF


def forge(src, target):
    quoted_udp = struct.pack("!HHHH", 4444, 5555, 8 + len(MARK), 0) + MARK
    quoted = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(quoted_udp), 7, 0, 64, 17, 0,
                         socket.inet_aton(target), socket.inet_aton(src)) + quoted_udp
    icmp = struct.pack("!BBHI", 3, 3, 0, 0) + quoted
    icmp = icmp[:2] + struct.pack("!H", checksum(icmp)) + icmp[4:]
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    for _ in range(3):
        sock.sendto(icmp, (target, 0))
    return "sent"


def icmp_listen(control, cap):
    """Until the control source's three forged errors arrived (after everyone else's)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    sock.settimeout(cap)
    print("listening", flush=True)
    forged = {}
    try:
        while forged.get(control, 0) < 3:
            data, (src, _) = sock.recvfrom(65535)
            if MARK in data:
                forged[src] = forged.get(src, 0) + 1
    except socket.timeout:
        pass
    return "\n".join(f"forged {src} {n}" for src, n in sorted(forged.items()))


def main(argv):
    cmd = argv[0]
    if cmd == "serve":
        serve([int(p) for p in argv[1:]])
    elif cmd == "udp":
        print(udp(argv[1], int(argv[2]), int(argv[3]), argv[4:]))
    elif cmd == "tcp":
        print(tcp(argv[1], int(argv[2]), argv[3:]))
    elif cmd == "forge":
        print(forge(argv[1], argv[2]))
    elif cmd == "icmp-listen":
        print(icmp_listen(argv[1], float(argv[2])), flush=True)
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main(sys.argv[1:])
