#!/usr/bin/env bash
# Hosts for the multi-host MPI tests, made of network namespaces on this machine:
#   netns-hosts.sh up TAG N DIR   N hosts h1..hN: namespaces <TAG>h<i>, each with a veth on the
#                                 bridge <TAG>b, addresses 10.<a>.<b>.<i>/24 and this machine at .254;
#                                 writes DIR/hostfile (one slot per host, by address), DIR/agent
#                                 (Open MPI's plm_rsh_agent: runs the command inside the host's
#                                 namespace with its own hostname, `unshare --uts`) and DIR/mpirun-args
#   netns-hosts.sh down TAG       kills what runs in the namespaces, deletes them and the bridge
#   netns-hosts.sh link TAG I up|down   takes host I's link up or down
#   netns-hosts.sh slow TAG I RATE      limits host I's link to RATE (tc tbf, e.g. 100mbit) both ways
# TAG is "nat<pid of the test>n<k>" (k: the test's k-th set of hosts, so a set being torn down by
# the kernel never collides with the next); `up` first removes what a dead test process left behind.
# Only the namespaces and the bridge made here are touched; traffic stays among them and this host.
set -euo pipefail

subnet_of() {  # a /24 per tag, from the test's pid and k, inside 10.200.0.0 .. 10.249.255.0
  local rest=${1#nat} pid k key
  pid=${rest%n*}; k=${rest##*n}
  key=$(( (pid * 8 + k) % (50 * 256) ))
  echo "10.$((200 + key / 256)).$((key % 256))"
}

down() {
  local tag=$1 ns
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${tag}h[0-9]+$" || true); do
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
    ip netns delete "$ns" 2>/dev/null || true
  done
  ip link delete "${tag}b" 2>/dev/null || true
  # The kernel removes a deleted namespace's veth peers asynchronously.
  for _ in $(seq 50); do
    ip -o link show 2>/dev/null | grep -q "${tag}v" || return 0
    sleep 0.1
  done
}

remove_stale() {
  local tag pid
  for tag in $( (ip netns list 2>/dev/null | awk '{print $1}'; ip -o link show type bridge 2>/dev/null | awk -F': ' '{print $2}') \
                | grep -oE '^nat[0-9]+n[0-9]+' | sort -u); do
    pid=${tag#nat}; pid=${pid%n*}
    kill -0 "$pid" 2>/dev/null || down "$tag"
  done
}

up() {
  local tag=$1 n=$2 dir=$3 net i
  remove_stale
  down "$tag"
  net=$(subnet_of "$tag")
  ip link add "${tag}b" type bridge
  ip addr add "$net.254/24" dev "${tag}b"
  ip link set "${tag}b" up
  : > "$dir/hostfile"
  for i in $(seq 1 "$n"); do
    ip netns add "${tag}h$i"
    ip link add "${tag}v$i" type veth peer name eth0 netns "${tag}h$i"
    ip link set "${tag}v$i" master "${tag}b" up
    ip -n "${tag}h$i" addr add "$net.$i/24" dev eth0
    ip -n "${tag}h$i" link set eth0 up
    ip -n "${tag}h$i" link set lo up
    echo "$net.$i slots=1" >> "$dir/hostfile"
  done
  cat > "$dir/agent" <<AGENT
#!/bin/sh
# plm_rsh_agent: \$1 is the host (an address of $net.0/24), the rest the command to run there.
while [ "\${1#-}" != "\$1" ]; do shift; done
i=\${1##*.}; shift
exec ip netns exec "${tag}h\$i" unshare --uts /bin/sh -c 'hostname "h\$0"; exec /bin/sh -c "\$*"' "\$i" "\$@"
AGENT
  chmod +x "$dir/agent"
  # 2 cores, several ranks: ranks that yield while they wait, or small messages cost a scheduler tick.
  echo "--mca plm_rsh_agent $dir/agent --mca oob_tcp_if_include $net.0/24 --mca btl_tcp_if_include $net.0/24 --mca btl tcp,self --mca mpi_yield_when_idle 1" \
    > "$dir/mpirun-args"
}

link() {
  ip link set "${1}v$2" "$3"
}

slow() {  # egress of both ends of host I's veth: what it sends and what it receives
  tc qdisc replace dev "${1}v$2" root tbf rate "$3" burst 32kbit latency 50ms
  ip netns exec "${1}h$2" tc qdisc replace dev eth0 root tbf rate "$3" burst 32kbit latency 50ms
}

case "${1:-}" in
  up) up "$2" "$3" "$4" ;;
  down) down "$2" ;;
  link) link "$2" "$3" "$4" ;;
  slow) slow "$2" "$3" "$4" ;;
  *) echo "usage: $0 up TAG N DIR | down TAG | link TAG I up|down | slow TAG I RATE" >&2; exit 2 ;;
esac
