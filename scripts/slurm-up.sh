#!/usr/bin/env bash
# A 3-node Slurm cluster on this one host, for bench's multi-machine tests and for trying
# `--shard` and `run.launcher` by hand.
#
#   scripts/slurm-up.sh [DIR]        (default: $BENCH_SLURM_DIR or /tmp/bench-slurm)
#   export SLURM_CONF=DIR/slurm.conf  # then sbatch, srun, squeue, sinfo use it
#   scripts/slurm-down.sh [DIR]
#
# Needs Debian's slurm-wlm and munge (apt-get install -y slurm-wlm munge) and root (the
# daemons run as root here). No systemd: it starts munged (own key and socket in DIR),
# slurmctld and one `slurmd -N nX` per node n1..n3, every node at NodeAddr=127.0.0.1 with its
# own port, each with this machine's CPUs. Every daemon writes a pid file in DIR, and
# slurm-down.sh stops them by those pids, never by name. Idempotent: a cluster already up in
# DIR is reused. Prints `SLURM_CONF=DIR/slurm.conf` when the three nodes are idle. With
# SLURM_OWNER_PID set, the cluster stops by itself when that process is gone.
set -euo pipefail
DIR="${1:-${BENCH_SLURM_DIR:-/tmp/bench-slurm}}"
NODES=(n1 n2 n3)
for cmd in munged slurmctld slurmd sinfo; do
  command -v "$cmd" >/dev/null 2>&1 || {
    echo "slurm-up: $cmd not found; install Slurm and munge: apt-get install -y slurm-wlm munge" >&2
    exit 1
  }
done
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
export SLURM_CONF="$DIR/slurm.conf"

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

all_up() {
  alive "$DIR/munged.pid" && alive "$DIR/slurmctld.pid" || return 1
  for n in "${NODES[@]}"; do alive "$DIR/slurmd-$n.pid" || return 1; done
}

if all_up && sinfo -h >/dev/null 2>&1; then
  echo "SLURM_CONF=$SLURM_CONF"
  exit 0
fi
# Something is half up (a crash, a reboot): stop what is left and start clean.
"$(dirname "$0")/slurm-down.sh" "$DIR" >/dev/null 2>&1 || true
rm -rf "$DIR/state" "$DIR"/spool-* "$DIR"/*.log

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
CPUS=$(nproc)
CTLD_PORT=$(free_port)

# munge: its own key and socket, so a system munged (if any) is left alone.
if [ ! -f "$DIR/munge.key" ]; then
  dd if=/dev/urandom of="$DIR/munge.key" bs=1024 count=1 status=none
fi
chmod 0400 "$DIR/munge.key"
munged --force --key-file="$DIR/munge.key" --socket="$DIR/munge.socket" \
  --pid-file="$DIR/munged.pid" --log-file="$DIR/munged.log" --seed-file="$DIR/munged.seed"

mkdir -p "$DIR/state"
{
  cat <<EOF
ClusterName=bench
SlurmctldHost=$(hostname)(127.0.0.1)
SlurmctldPort=$CTLD_PORT
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool-%n
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd-%n.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
LaunchParameters=use_interactive_step
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
SlurmdParameters=config_overrides
KillWait=5
InactiveLimit=0
MinJobAge=300
EOF
  for i in "${!NODES[@]}"; do
    echo "NodeName=${NODES[$i]} NodeHostname=$(hostname) NodeAddr=127.0.0.1 Port=$(free_port) CPUs=$CPUS State=UNKNOWN"
  done
  echo "PartitionName=debug Nodes=$(IFS=,; echo "${NODES[*]}") Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES"
} > "$SLURM_CONF"

slurmctld -f "$SLURM_CONF"
for n in "${NODES[@]}"; do
  mkdir -p "$DIR/spool-$n"
  slurmd -f "$SLURM_CONF" -N "$n"
done

# An owner (a test process): when it is gone, however it ended (a Ctrl-C of cargo test, a
# kill), the cluster stops too. Detached from this script's output, so that a caller
# reading it is not held; its pid file is stopped with the daemons.
if [ -n "${SLURM_OWNER_PID:-}" ]; then
  setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; exec "$2/slurm-down.sh" "$3"' \
    _ "$SLURM_OWNER_PID" "$(cd "$(dirname "$0")" && pwd)" "$DIR" </dev/null >/dev/null 2>&1 9>&- &
  echo $! > "$DIR/watchdog.pid"
fi

# Wait until the nodes report idle.
for _ in $(seq 1 60); do
  idle=$(sinfo -h -N -o '%N %t' 2>/dev/null | awk '$2 == "idle"' | wc -l)
  [ "$idle" -eq "${#NODES[@]}" ] && { echo "SLURM_CONF=$SLURM_CONF"; exit 0; }
  sleep 0.5
done
echo "slurm-up: the nodes did not come up idle; see $DIR/*.log" >&2
sinfo -N >&2 || true
exit 1
