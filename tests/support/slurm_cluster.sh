# A real one-node Slurm cluster on this machine, for tests (sourced by tests/test_slurm.sh):
# munged, slurmctld and slurmd of Debian 12's packages, every file in $SLURM_DIR, ports of their own,
# loopback only. slurm_cluster_start sets SLURM_CONF (and MUNGE socket) for the commands; slurm_cluster_stop
# kills exactly the daemons it started, by pid.

slurm_cluster_install() {  # installs the packages if missing; returns 1 if they cannot be installed
    local need=()
    for cmd in munged mungekey slurmctld slurmd sbatch; do command -v "$cmd" >/dev/null || need+=("$cmd"); done
    [ ${#need[@]} -eq 0 ] && return 0
    [ "$(id -u)" -eq 0 ] || { echo "missing ${need[*]} and not root to apt-get them"; return 1; }
    DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y --no-install-recommends \
        munge slurmctld slurmd slurm-client >"$SLURM_DIR/apt.log" 2>&1 ||
        { echo "apt-get install munge slurmctld slurmd slurm-client failed (log: $SLURM_DIR/apt.log)"; return 1; }
}

_free_port() {  # an unused TCP port from the kernel's ephemeral range
    /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

SLURM_PIDS=()

slurm_cluster_start() {  # $SLURM_DIR must exist
    local d=$SLURM_DIR host cpus mem
    host=$(hostname -s)
    cpus=$(nproc); [ "$cpus" -gt 2 ] && cpus=2
    mem=$(awk '/MemTotal/ {print int($2 / 1024 / 2)}' /proc/meminfo)
    mkdir -p "$d/munge" "$d/state" "$d/spool" "$d/log"
    chmod 700 "$d/munge"
    mungekey -c -k "$d/munge/munge.key" || return 1
    munged --force --socket="$d/munge/munge.socket" --key-file="$d/munge/munge.key" \
        --pid-file="$d/munge/munged.pid" --log-file="$d/log/munged.log" --seed-file="$d/munge/munged.seed" || return 1
    _wait_for_file "$d/munge/munged.pid" || return 1
    SLURM_PIDS+=("$(cat "$d/munge/munged.pid")")
    cat >"$d/slurm.conf" <<CONF
ClusterName=qrnntest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$(_free_port)
SlurmdPort=$(_free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge/munge.socket
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
KillWait=5
MinJobAge=300
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
    export SLURM_CONF=$d/slurm.conf
    slurmctld -f "$SLURM_CONF" || return 1
    _wait_for_file "$d/slurmctld.pid" || return 1
    SLURM_PIDS+=("$(cat "$d/slurmctld.pid")")
    slurmd -f "$SLURM_CONF" || return 1
    _wait_for_file "$d/slurmd.pid" || return 1
    SLURM_PIDS+=("$(cat "$d/slurmd.pid")")
    local i
    for i in $(seq 1 60); do  # the node registers, then is idle
        sinfo -h -N -o '%T' 2>/dev/null | grep -q '^idle' && return 0
        sleep 0.5
    done
    echo "the Slurm node did not become idle: $(sinfo -N 2>&1 | tail -1)"; return 1
}

_wait_for_file() {
    local i
    for i in $(seq 1 40); do [ -s "$1" ] && return 0; sleep 0.25; done
    echo "$1 did not appear"; return 1
}

slurm_cluster_stop() {  # kills the daemons this shell started, newest first, by pid
    local i pid
    for ((i = ${#SLURM_PIDS[@]} - 1; i >= 0; i--)); do
        pid=${SLURM_PIDS[$i]}
        kill "$pid" 2>/dev/null || continue
        for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
        kill -9 "$pid" 2>/dev/null || true
    done
    SLURM_PIDS=()
}
