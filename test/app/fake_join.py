#!/usr/bin/env python3
"""test/app: a process that asks a running elastic job to take it back as
RANK (a JOIN with the job's token) but never comes: it names a port nothing
listens on and never opens a link. It asks again as soon as the job closes
its JOIN, until SECONDS pass. Usage: fake_join.py HOST PORT TOKEN RANK
SECONDS. Prints how many JOINs it sent and how many were accepted."""
import socket
import struct
import sys
import time


def fnv1a64(s):
    h = 0xcbf29ce484222325
    for b in s.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h or 1


def join_msg(token, rank):
    body = struct.pack("<IIQ4sHH", rank, 1, 0, socket.inet_aton("127.0.0.1"), 9, 0)
    return b"TRE1" + struct.pack("<HHQII", 1, 1, token, 0xFFFFFFFF, len(body)) + body


def main():
    host, port, token, rank, seconds = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
    end = time.monotonic() + seconds
    msg = join_msg(fnv1a64(token), rank)
    sent = accepted = 0
    while time.monotonic() < end:
        try:
            s = socket.create_connection((host, port), timeout=1)
            s.sendall(msg)
            sent += 1
            s.settimeout(max(0.1, end - time.monotonic()))
            while True:
                d = s.recv(4096)
                if not d:
                    break
                if len(d) >= 32 and d[:4] == b"TRE1" and struct.unpack("<H", d[6:8])[0] == 2 and \
                        struct.unpack("<I", d[24:28])[0] == 0:
                    accepted += 1
                    print("fake_join: accepted at %.2f s" % (seconds - (end - time.monotonic())),
                          flush=True)
        except OSError:
            pass
        finally:
            try:
                s.close()
            except Exception:
                pass
        time.sleep(0.1)
    print("fake_join: %d JOINs sent, %d accepted" % (sent, accepted), flush=True)


if __name__ == "__main__":
    main()
