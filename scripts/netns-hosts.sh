#!/usr/bin/env bash
# netns-hosts.sh: separate MPI "hosts" on one machine (docs/explanation/testbed.md).
#
# Each host is a network namespace with its own UTS namespace (own
# hostname), linked by a veth pair to a bridge in a namespace of its own;
# Open MPI runs over TCP between hosts, and a plm_rsh_agent enters a host's
# namespaces with nsenter. Nothing outside the namespaces this script
# creates is touched: no address, route or interface of the machine, no file
# in /etc. Needs root, ip (iproute2), unshare and nsenter (util-linux).
#
#   netns-hosts.sh up N [SLOTS]     create N hosts of SLOTS ranks (default 1);
#                                   prints GCLOCK_NETNS_ID=<id> (eval it)
#   netns-hosts.sh run [MPIRUN ARGS...]
#                                   mpirun inside host 0 of $GCLOCK_NETNS_ID
#                                   with the hostfile and TCP settings
#   netns-hosts.sh exec HOST CMD... a command inside host HOST (0..N-1)
#   netns-hosts.sh down [ID]        remove everything of one test bed
#   netns-hosts.sh with N SLOTS [MPIRUN ARGS...]
#                                   up, run, down in one go (trap on exit);
#                                   exits with mpirun's code
#   netns-hosts.sh stale            remove test beds whose creator is gone
#   netns-hosts.sh list             test beds on this machine
#
# Example (as root):
#   eval "$(scripts/netns-hosts.sh up 2 2)"; export GCLOCK_NETNS_ID
#   scripts/netns-hosts.sh run -np 4 -x LD_PRELOAD=$PWD/build/libgclock.so ./a.out
#   scripts/netns-hosts.sh down
#   scripts/netns-hosts.sh with 4 1 -np 4 ./a.out     # all in one
#
# Names: namespaces gclock-<id>-br and gclock-<id>-h<i>, hostnames
# gck<id>-h<i>, state in $GCLOCK_NETNS_RUN/<id> (default /run/gclock-netns).
# <id> is unique per run (pid and random bits), so parallel test beds never
# collide. A bed made by `with` holds the pid of its script, and `stale`
# (also run by `up`) removes beds of this script whose owner no longer
# exists, e.g. after a SIGKILL; a bed made by `up` is kept until `down`
# unless GCLOCK_NETNS_OWNER names a pid whose exit makes it stale.
# GCLOCK_NETNS_SUBNET (default 10.213.0) is the /24 on the bridge; it exists
# only inside the bed's namespaces.
set -euo pipefail

RUNDIR=${GCLOCK_NETNS_RUN:-/run/gclock-netns}
SUBNET=${GCLOCK_NETNS_SUBNET:-10.213.0}
PREFIX=gclock-

die() {
	echo "netns-hosts: $*" >&2
	exit 2
}

need() {
	[ "$(id -u)" = 0 ] || die "needs root (network and UTS namespaces)"
	local t
	for t in ip unshare nsenter mount umount; do
		command -v "$t" >/dev/null || die "$t not found (install iproute2 / util-linux; scripts/setup.sh does)"
	done
}

# host_ns ID I / uts_file ID I
host_ns() { echo "${PREFIX}$1-h$2"; }
br_ns() { echo "${PREFIX}$1-br"; }
uts_file() { echo "$RUNDIR/$1/uts-h$2"; }

# teardown ID: kill what runs in the bed's namespaces, delete them, unmount
# the UTS files, remove the state. Idempotent; never fails.
teardown() {
	local id=$1 st="$RUNDIR/$1" ns f pids i
	[[ $id =~ ^[0-9a-f]+$ ]] || return 0
	for i in 1 2 3; do
		pids=""
		for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${PREFIX}${id}-" || true); do
			pids+=" $(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')"
		done
		pids=$(echo $pids)
		[ -z "$pids" ] && break
		# shellcheck disable=SC2086
		kill -TERM $pids 2>/dev/null || true
		sleep 0.5
		# shellcheck disable=SC2086
		[ "$i" = 3 ] && kill -KILL $pids 2>/dev/null || true
	done
	for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${PREFIX}${id}-" || true); do
		ip netns del "$ns" 2>/dev/null || true
	done
	if [ -d "$st" ]; then
		for f in "$st"/uts-h*; do
			[ -e "$f" ] || continue
			umount "$f" 2>/dev/null || umount -l "$f" 2>/dev/null || true
			rm -f "$f"
		done
		rm -rf "$st"
	fi
}

# stale: beds of this script whose owner process is gone (or whose state
# directory is gone while namespaces remain).
stale() {
	local st id owner start ns
	for st in "$RUNDIR"/*/; do
		[ -d "$st" ] || continue
		id=$(basename "$st")
		read -r owner start 2>/dev/null <"$st/owner" || owner=""
		# 0: made by `up`, kept until `down`; no owner: a bed in the making,
		# unless that began over a minute ago
		[ "$owner" = 0 ] && continue
		[ -z "$owner" ] && [ -z "$(find "$st" -maxdepth 0 -mmin +1)" ] && continue
		if kill -0 "$owner" 2>/dev/null && [ "${start:-}" = "$(proc_start "$owner")" ]; then
			continue
		fi
		echo "netns-hosts: removing stale test bed $id (owner $owner gone)" >&2
		teardown "$id"
	done
	for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${PREFIX}[0-9a-f]+-(br|h[0-9]+)$" || true); do
		id=${ns#"$PREFIX"}
		id=${id%-*}
		if [ ! -d "$RUNDIR/$id" ]; then
			echo "netns-hosts: removing orphan namespace $ns" >&2
			teardown "$id"
		fi
	done
}

# proc_start PID: the process's start time (field 22 of /proc/PID/stat), so
# a recycled pid is not taken for the owner.
proc_start() {
	awk '{sub(/^.*\) /, ""); print $20}' "/proc/$1/stat" 2>/dev/null || true
}

up() {
	local n=${1:-} slots=${2:-1} owner=${GCLOCK_NETNS_OWNER:-0}
	[[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 200 ] || die "up N [SLOTS]: N hosts, 1..200"
	[[ $slots =~ ^[0-9]+$ ]] && [ "$slots" -ge 1 ] || die "up N [SLOTS]: SLOTS ranks per host, >= 1"
	need
	stale
	local id st br i ns uts ip
	id=$(printf '%x%04x' $$ $((RANDOM)))
	st="$RUNDIR/$id"
	mkdir -p "$st"
	# owner: "<pid> <start time>", written whole (a concurrent `stale` reads
	# either nothing, i.e. a bed in the making, or both)
	echo "$owner $(proc_start "$owner")" >"$st/owner.tmp"
	mv "$st/owner.tmp" "$st/owner"
	echo "$n $slots" >"$st/size"
	# From here on a failure removes what was made.
	trap 'teardown '"$id"'' ERR
	br=$(br_ns "$id")
	ip netns add "$br"
	ip -n "$br" link set lo up
	ip -n "$br" link add br0 type bridge
	ip -n "$br" link set br0 up
	: >"$st/hostfile"
	for ((i = 0; i < n; i++)); do
		ns=$(host_ns "$id" "$i")
		uts=$(uts_file "$id" "$i")
		ip="$SUBNET.$((i + 1))"
		ip netns add "$ns"
		ip -n "$br" link add "v$i" type veth peer name eth0 netns "$ns"
		ip -n "$br" link set "v$i" master br0 up
		ip -n "$ns" link set lo up
		ip -n "$ns" addr add "$ip/24" dev eth0
		ip -n "$ns" link set eth0 up
		touch "$uts"
		unshare --uts="$uts" hostname "gck$id-h$i"
		echo "$ip slots=$slots" >>"$st/hostfile"
		echo "$ip $ns $uts" >>"$st/hosts"
	done
	# The rsh agent Open MPI calls as `agent HOST COMMAND...`.
	cat >"$st/agent" <<EOF
#!/bin/sh
# plm_rsh_agent of test bed $id: run COMMAND inside HOST's namespaces.
host=\$1
shift
while read -r ip ns uts; do
	if [ "\$ip" = "\$host" ]; then
		exec nsenter --net=/run/netns/\$ns --uts=\$uts -- /bin/sh -c "\$*"
	fi
done <"$st/hosts"
echo "netns-hosts agent: unknown host \$host" >&2
exit 255
EOF
	chmod 755 "$st/agent"
	trap - ERR
	echo "GCLOCK_NETNS_ID=$id"
}

# enter ID I CMD...: run CMD in host I's namespaces.
enter() {
	local id=$1 i=$2
	shift 2
	exec nsenter --net="/run/netns/$(host_ns "$id" "$i")" --uts="$(uts_file "$id" "$i")" -- "$@"
}

bed() {
	local id=${GCLOCK_NETNS_ID:-}
	[ -n "$id" ] || die "GCLOCK_NETNS_ID is not set (eval the output of \`up\`)"
	[ -f "$RUNDIR/$id/hosts" ] || die "no test bed $id (state $RUNDIR/$id missing)"
	echo "$id"
}

# mpirun_argv ID ARGS...: mpirun with the bed's hostfile and TCP settings.
mpirun_cmd() {
	local id=$1 st="$RUNDIR/$1"
	shift
	# The bed needs root, so mpirun runs as root.
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	enter "$id" 0 mpirun --hostfile "$st/hostfile" \
		--mca plm_rsh_agent "$st/agent" \
		--mca btl tcp,self,vader \
		--mca btl_tcp_if_include "$SUBNET.0/24" \
		--mca oob_tcp_if_include "$SUBNET.0/24" \
		--mca mpi_yield_when_idle 1 \
		"$@"
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
up) up "$@" ;;
run)
	need
	id=$(bed)
	mpirun_cmd "$id" "$@"
	;;
exec)
	need
	id=$(bed)
	[ $# -ge 2 ] || die "exec HOST CMD..."
	enter "$id" "$@"
	;;
down)
	need
	id=${1:-${GCLOCK_NETNS_ID:-}}
	[ -n "$id" ] || die "down ID (or GCLOCK_NETNS_ID)"
	teardown "$id"
	;;
with)
	[ $# -ge 2 ] || die "with N SLOTS [MPIRUN ARGS...]"
	n=$1 slots=$2
	shift 2
	need
	export GCLOCK_NETNS_OWNER=$$
	out=$(up "$n" "$slots")
	id=${out#GCLOCK_NETNS_ID=}
	trap 'teardown '"$id"'' EXIT
	echo "netns-hosts: test bed $id: $n hosts x $slots slots" >&2
	# mpirun runs in the background so that a signal is handled at once
	# (bash runs traps only between commands, and `wait` is interruptible);
	# the EXIT trap then kills whatever still runs in the namespaces.
	mpirun_cmd "$id" "$@" <&0 &
	pid=$!
	trap 'kill -TERM $pid 2>/dev/null; exit 143' TERM INT HUP
	rc=0
	wait "$pid" || rc=$?
	exit "$rc"
	;;
stale)
	need
	stale
	;;
list)
	for st in "$RUNDIR"/*/; do
		[ -d "$st" ] || continue
		echo "$(basename "$st") owner $(cut -d' ' -f1 "$st/owner" 2>/dev/null) hosts/slots $(cat "$st/size" 2>/dev/null)"
	done
	;;
*)
	sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac
