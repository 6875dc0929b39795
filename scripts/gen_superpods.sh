#!/bin/sh
# gen_superpods.sh - write a topology of two unequal super-pods of servers (issue 22 item 7's scale tests):
#   gen_superpods.sh RANKS_PER_SERVER SERVERS_IN_POD_A SERVERS_IN_POD_B > FILE.yaml
# e.g. 16 2500 3750: 40,000 + 60,000 = 100,000 ranks; 16 25000 37500: 1,000,000 ranks. Three levels: server,
# super-pod, cluster (figures of a typical cluster: 56, 25 and 6.25 GB/s). Made at test time, never committed.
set -eu
if [ $# -ne 3 ]; then
    echo "usage: $0 RANKS_PER_SERVER SERVERS_IN_POD_A SERVERS_IN_POD_B" >&2
    exit 2
fi
L=$1 A=$2 B=$3
pod() { # a flow list of $1 servers of $L ranks
    awk -v n="$1" -v l="$L" 'BEGIN { printf "["; for (i = 0; i < n; i++) printf "%s%d", i ? ", " : "", l; printf "]" }'
}
echo "name: superpods-$L-$A-$B"
echo "levels:"
echo "  - {name: server, bandwidth: 56 GB/s, latency: 1 us}"
echo "  - {name: superpod, bandwidth: 25 GB/s, latency: 5 us}"
echo "  - {name: cluster, bandwidth: 6.25 GB/s, latency: 10 us}"
echo "reduce_bandwidth: 100 GB/s"
echo "layout:"
printf '  - '; pod "$A"; echo
printf '  - '; pod "$B"; echo
