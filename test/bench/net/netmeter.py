#!/usr/bin/python3
"""bench-net: the bytes the ranks put on their links over the timed steps.
Run in the switch namespace (ip netns exec PREFIX-sw): follows LOG (rank 0's
output) and, when a line starting with START appears and again when one
starting with END appears, reads the rx counters of the switch's veth ends
IFACE... (each the bytes its rank sent). Prints one line:
  bytes TOTAL seconds S
TOTAL the bytes all the given ranks sent between the two lines, S the time
between them as seen here; or "bytes ? seconds ?" when TIMEOUT seconds pass
first (run.sh stops it sooner when the ranks have exited without END).

usage: netmeter.py LOG START END TIMEOUT IFACE...
"""
import os
import sys
import time


def sent(ifaces):
    total = 0
    for i in ifaces:
        with open('/sys/class/net/%s/statistics/rx_bytes' % i) as f:
            total += int(f.read())
    return total


def main():
    log, start, end, timeout, ifaces = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5:]
    deadline = time.monotonic() + timeout
    want, marks, buf, pos = [start, end], [], b'', 0
    while want and time.monotonic() < deadline:
        try:
            with open(log, 'rb') as f:
                f.seek(pos)
                chunk = f.read()
        except FileNotFoundError:
            chunk = b''
        if not chunk:
            time.sleep(0.002)
            continue
        pos += len(chunk)
        buf += chunk
        *lines, buf = buf.split(b'\n')
        for line in lines:
            if want and line.decode(errors='replace').startswith(want[0]):
                marks.append((sent(ifaces), time.monotonic()))
                want.pop(0)
    if len(marks) == 2:
        print('bytes %d seconds %.4f' % (marks[1][0] - marks[0][0], marks[1][1] - marks[0][1]))
    else:
        print('bytes ? seconds ?')
    sys.stdout.flush()
    os._exit(0)


if __name__ == '__main__':
    main()
