#!/usr/bin/env bash
# A real one-node Slurm cluster in a folder, for trying sharded sweeps (and for the e2e test).
#
#   scripts/slurm_local.sh start DIR   start munged, slurmctld and slurmd with all their state,
#                                      logs, pid files and sockets under DIR; wait until the node
#                                      is idle; print the line to export (SLURM_CONF=...)
#   scripts/slurm_local.sh stop DIR    stop them; nothing of this cluster is left running
#   scripts/slurm_local.sh status DIR  print sinfo for the cluster; 0 when it answers
#
# Needs root (slurmd runs jobs as their user) and Debian's slurmctld, slurmd, slurm-client and
# munge; no systemd: every daemon is started here. Starting again stops what DIR ran before and
# wipes its state first, so a stale or half-started cluster never gets in the way. The ports are
# free ones found at start (SLURM_LOCAL_PORT=N asks for N and N+1), so two clusters in two
# folders can run side by side. Exit status: 0 ok, 1 a daemon did not start (its log's tail is
# printed), 2 bad usage or a missing program.
set -euo pipefail

usage() {
  echo "usage: $0 start|stop|status DIR" >&2
  exit 2
}
[[ $# -eq 2 ]] || usage
action=$1
dir=$2
case "$action" in start | stop | status) ;; *) usage ;; esac
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

conf=$dir/slurm.conf
socket=$dir/munge/munge.socket.2
timeout_s=${SLURM_LOCAL_TIMEOUT:-60}

log() { echo "slurm_local: $*" >&2; }

# The pid in FILE when that process is alive and runs PROGRAM (a recycled pid is not ours).
live_pid() {
  local file=$1 program=$2 pid
  [[ -s $file ]] || return 1
  pid=$(tr -dc '0-9' <"$file")
  [[ -n $pid ]] && alive "$pid" || return 1
  [[ $(cat "/proc/$pid/comm" 2>/dev/null) == "$program"* ]] || return 1
  echo "$pid"
}

# Whether process PID lives (a zombie waiting to be reaped does not).
alive() { [[ -r /proc/$1/stat && $(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) != Z ]]; }

# Stops the daemon of pid file FILE running PROGRAM: TERM, then KILL after 10 s.
stop_daemon() {
  local file=$1 program=$2 pid i
  pid=$(live_pid "$file" "$program") || { rm -f "$file"; return 0; }
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    alive "$pid" || break
    sleep 0.1
  done
  if alive "$pid"; then
    log "$program ($pid) ignored SIGTERM; killing it"
    kill -KILL "$pid" 2>/dev/null || true
    sleep 0.2
  fi
  rm -f "$file"
}

# Job steps left behind by a killed slurmd: slurmstepd processes started by this cluster's
# slurmd (they inherit its SLURM_CONF); nothing else is touched.
stop_steps() {
  local p
  for p in /proc/[0-9]*; do
    [[ $(cat "$p/comm" 2>/dev/null) == slurmstepd ]] || continue
    tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -qxF "SLURM_CONF=$conf" || continue
    kill -KILL "${p#/proc/}" 2>/dev/null || true
  done
}

stop_all() {
  # Jobs first, while the controller can still end them cleanly.
  if [[ -f $conf ]] && live_pid "$dir/run/slurmctld.pid" slurmctld >/dev/null; then
    SLURM_CONF=$conf timeout 10 scancel --quiet --user=root 2>/dev/null || true
    sleep 0.5
  fi
  stop_daemon "$dir/run/slurmd.pid" slurmd
  stop_steps
  stop_daemon "$dir/run/slurmctld.pid" slurmctld
  stop_daemon "$dir/run/munged.pid" munged
}

tail_logs() {
  local f
  for f in "$dir"/log/*.log; do
    [[ -s $f ]] || continue
    echo "---- tail of $f" >&2
    tail -n 20 "$f" >&2
  done
}

port_free() { ! ss -Htln "sport = :$1" 2>/dev/null | grep -q .; }

# Two consecutive free ports, from SLURM_LOCAL_PORT or a random start.
pick_ports() {
  local p=${SLURM_LOCAL_PORT:-$((20000 + RANDOM % 20000))} i
  for ((i = 0; i < 200; i++, p += 2)); do
    if port_free "$p" && port_free $((p + 1)); then
      echo "$p"
      return 0
    fi
  done
  log "no two free ports found from ${SLURM_LOCAL_PORT:-a random start}"
  return 1
}

node_state() { SLURM_CONF=$conf sinfo -h -N -o '%t' 2>/dev/null | head -n 1; }

if [[ $action == stop ]]; then
  stop_all
  log "stopped (state kept in $dir)"
  exit 0
fi

if [[ $action == status ]]; then
  [[ -f $conf ]] || { log "no cluster in $dir"; exit 1; }
  SLURM_CONF=$conf sinfo
  exit $?
fi

# ---- start
[[ $(id -u) -eq 0 ]] || { log "must run as root (slurmd runs jobs as their user)"; exit 2; }
for program in munged slurmctld slurmd sinfo sbatch ss; do
  command -v "$program" >/dev/null || PATH=$PATH:/usr/sbin:/sbin
  command -v "$program" >/dev/null || { log "$program not found: apt-get install munge slurmctld slurmd slurm-client iproute2"; exit 2; }
done
if ((${#socket} >= 100)); then
  log "DIR is too long for a unix socket path ($socket); use a shorter DIR"
  exit 2
fi

# Whatever ran here before goes, with its state.
stop_all
rm -rf "$dir/state" "$dir/spool" "$dir/log" "$dir/run" "$dir/munge"
mkdir -p "$dir/state" "$dir/spool" "$dir/log" "$dir/run" "$dir/munge"
chmod 0755 "$dir"
chmod 0700 "$dir/munge"

# munge: a key of this cluster's own and a daemon on its own socket.
key=$dir/munge/munge.key
if command -v mungekey >/dev/null; then
  mungekey --create --force --keyfile="$key" 2>/dev/null || dd if=/dev/urandom of="$key" bs=1024 count=1 status=none
else
  dd if=/dev/urandom of="$key" bs=1024 count=1 status=none
fi
chmod 0600 "$key"
munged --force --socket="$socket" --key-file="$key" --log-file="$dir/log/munged.log" \
  --pid-file="$dir/run/munged.pid" --seed-file="$dir/munge/munged.seed" 2>>"$dir/log/munged.log" || {
  log "munged did not start"
  tail_logs
  exit 1
}

port=$(pick_ports)
host=$(hostname -s)
cat >"$conf" <<EOF
# Written by scripts/slurm_local.sh: a one-node cluster whose state lives in $dir.
ClusterName=bblocal
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
MaxArraySize=1001
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=100 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
# slurmd reads cgroup.conf only for cgroup plugins; an empty one keeps older builds quiet.
: >"$dir/cgroup.conf"

export SLURM_CONF=$conf
if ! slurmctld -c -f "$conf" >>"$dir/log/slurmctld.log" 2>&1; then
  log "slurmctld did not start"
  tail_logs
  stop_all
  exit 1
fi
if ! slurmd -f "$conf" >>"$dir/log/slurmd.log" 2>&1; then
  log "slurmd did not start"
  tail_logs
  stop_all
  exit 1
fi

# Ready when the node is idle (or mixed/allocated: it runs jobs).
state=""
for ((i = 0; i < timeout_s * 2; i++)); do
  state=$(node_state || true)
  case "$state" in idle* | mix* | alloc*) break ;; esac
  if ! live_pid "$dir/run/slurmctld.pid" slurmctld >/dev/null && ((i > 4)); then break; fi
  sleep 0.5
done
case "$state" in
  idle* | mix* | alloc*) ;;
  *)
    log "the node did not become idle in ${timeout_s} s (state: '${state:-no answer}')"
    tail_logs
    stop_all
    exit 1
    ;;
esac

log "cluster up: node $host ($state), ports $port/$((port + 1)), state in $dir"
echo "export SLURM_CONF=$conf"
