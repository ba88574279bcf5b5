#!/usr/bin/env bash
# tinyring test/board: two nettest boards joined by a QEMU socket netdev on
# 127.0.0.1 (run by test_board.sh, inside a fresh network namespace when one
# can be made, so the port can never collide with anything else).
#   pingpong.sh BOARD_DIR QEMU WORKDIR FRAMES   -> WORKDIR/{ping,pong}.{log,rc}
B=$1; QEMU=$2; work=$3; n=$4
ip link set lo up 2>/dev/null
port=$((20000 + RANDOM % 20000))
q() {  # role mac netdev-mode
  timeout 60 "$QEMU" -M mps2-an386 -display none -monitor none -serial none \
    -semihosting-config "enable=on,target=native,arg=nettest,arg=$1,arg=$n" \
    -nic "socket,model=lan9118,$3=127.0.0.1:$port,mac=$2" -kernel "$B/nettest.elf" \
    >"$work/$1.log" 2>&1
  echo $? >"$work/$1.rc"
}
q pong 52:54:00:00:00:b2 listen &
sleep 0.5
q ping 52:54:00:00:00:b1 connect
wait
