# tests/mpi_hosts.sh — two hosts on this machine for the MPI tests (sourced after
# tests/lib.sh and mpi_need): network namespaces A and B, each with its own host name
# (nodea, nodeb: a UTS namespace per process tree), joined by a veth pair with the
# addresses 10.200.0.1 and 10.200.0.2, which exist only inside them.  mpirun runs in A;
# its launch agent (plm_rsh_agent, ssh's stand-in) starts the daemon for B inside B; MPI
# and Open MPI's own traffic go over TCP on the veth, as between two servers.
#   hosts_up          creates them (skips the test where namespaces cannot be made) and
#                     replaces lib.sh's exit trap: every process in them is killed and
#                     they are removed, however the test ends
#   mpi_hosts ARGS    emu ARGS on rank 0 in A and rank 1 in B
#   hosts_cut         the network between them goes down (B's end of the veth)
#   hosts_pids        the processes still in either namespace
#   hosts_private     from then on each host also has its own /tmp, /dev/shm and
#                     /etc/hosts (a mount namespace each time a command runs there), $T
#                     at /mnt (the storage they share), and emu ($EMU) and the data set
#                     (data.dir's default, where it is installed) copied into its
#                     /tmp/emu; after the command the host lists its /tmp/emu into
#                     $T/NAME.ls and copies /tmp/emu/out, if a run wrote there, to
#                     $T/NAME.out.  mpi_hosts then runs /tmp/emu/emu.
#   on_host NAME CMD  CMD on host nodea or nodeb, set up so
NS_A=emuA$$ NS_B=emuB$$ VETH=emuv$$

hosts_down() {
	for ns in $NS_A $NS_B; do
		pids=$(ip netns pids "$ns" 2>/dev/null || true)
		[ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
	done
	sleep 0.2
	ip netns del $NS_A 2>/dev/null || true
	ip netns del $NS_B 2>/dev/null || true
	ip link del ${VETH}a 2>/dev/null || true
}

hosts_up() {
	command -v ip >/dev/null 2>&1 || skip "no ip command (iproute2)"
	command -v unshare >/dev/null 2>&1 || skip "no unshare command (util-linux)"
	ip netns add $NS_A 2>"$T/netns.err" ||
		skip "cannot create network namespaces here: $(cat "$T/netns.err")"
	trap 'rc=$?; hosts_down; [ -e "$T/missing" ] && { cat "$T/missing" >&2; rc=1; }
		rm -rf "$T"; exit $rc' EXIT
	unshare --uts true 2>"$T/netns.err" ||
		skip "cannot create UTS namespaces here: $(cat "$T/netns.err")"
	ip netns add $NS_B
	ip link add ${VETH}a type veth peer name ${VETH}b
	ip link set ${VETH}a netns $NS_A
	ip link set ${VETH}b netns $NS_B
	ip -n $NS_A addr add 10.200.0.1/24 dev ${VETH}a
	ip -n $NS_B addr add 10.200.0.2/24 dev ${VETH}b
	for ns in $NS_A:a $NS_B:b; do
		ip -n "${ns%:*}" link set lo up
		ip -n "${ns%:*}" link set ${VETH}${ns#*:} up
	done
	write_agent 'unshare --uts sh -c "hostname $name; $*"'
}

# ssh's stand-in: the host is the first argument, the command the rest, run in the
# host's network namespace by the command line $1, in which the agent expands $name
# (the host's name) and $* (the command)
write_agent() {
	cat >"$T/agent" <<EOF
#!/bin/sh
host=\$1; shift
case "\$host" in
10.200.0.1) ns=$NS_A name=nodea ;;
10.200.0.2) ns=$NS_B name=nodeb ;;
*) echo "agent: unknown host \$host" >&2; exit 1 ;;
esac
exec ip netns exec \$ns $1
EOF
	chmod +x "$T/agent"
}

mpi_hosts() {
	if [ -n "${HOSTS_PRIVATE:-}" ]; then
		on_host nodea mpirun --mca plm_rsh_agent /mnt/agent --host 10.200.0.1,10.200.0.2 \
			-n 2 --mca btl tcp,self --mca btl_tcp_if_include 10.200.0.0/24 \
			--mca oob_tcp_if_include 10.200.0.0/24 /tmp/emu/emu "$@"
		return
	fi
	ip netns exec $NS_A unshare --uts sh -c 'hostname nodea; exec "$0" "$@"' \
		mpirun --mca plm_rsh_agent "$T/agent" --host 10.200.0.1,10.200.0.2 -n 2 \
		--mca btl tcp,self --mca btl_tcp_if_include 10.200.0.0/24 \
		--mca oob_tcp_if_include 10.200.0.0/24 "$EMU" "$@"
}

hosts_cut() { ip -n $NS_B link set ${VETH}b down; }

hosts_private() {
	cp "$EMU" "$T/emu"
	[ ! -d /usr/share/datasets/fashion-mnist ] || cp -r /usr/share/datasets/fashion-mnist "$T/data"
	# host-run NAME CMD...: in the host's own UTS and mount namespaces (the caller made
	# them), its name, its /tmp, /dev/shm and /etc/hosts, then CMD
	cat >"$T/host-run" <<EOF
#!/bin/sh
name=\$1; shift
hostname \$name
# from the test: the stage at /mnt; from nodea's launcher (nodeb's daemon): there already
[ ! -d "$T" ] || mount --bind "$T" /mnt || exit 1
mount -t tmpfs tmpfs /tmp && mount -t tmpfs tmpfs /dev/shm || exit 1
printf '127.0.0.1 localhost\\n10.200.0.1 nodea\\n10.200.0.2 nodeb\\n' >/mnt/hosts.\$name
mount --bind /mnt/hosts.\$name /etc/hosts && mkdir /tmp/emu && cp /mnt/emu /tmp/emu/emu || exit 1
[ ! -d /mnt/data ] || cp -r /mnt/data /tmp/emu/data || exit 1
"\$@"; rc=\$?
ls -R /tmp/emu >/mnt/\$name.ls
[ ! -d /tmp/emu/out ] || cp -r /tmp/emu/out /mnt/\$name.out
exit \$rc
EOF
	chmod +x "$T/host-run"
	write_agent 'unshare --uts --mount --propagation private /mnt/host-run $name sh -c "$*"'
	HOSTS_PRIVATE=1
}

on_host() {
	ns=$NS_A
	[ "$1" = nodeb ] && ns=$NS_B
	ip netns exec $ns unshare --uts --mount --propagation private "$T/host-run" "$@"
}

hosts_pids() { { ip netns pids $NS_A; ip netns pids $NS_B; } 2>/dev/null || true; }

# rank R's supervisor (the rank process with children) of the run into $1
rank_pid() {
	for p in $(pgrep -f "run.output=$1"); do
		r=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
		[ "$r" = "$2" ] && [ -n "$(pgrep -P "$p")" ] && { echo "$p"; return 0; }
	done
	return 1
}
