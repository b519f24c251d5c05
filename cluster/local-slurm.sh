#!/usr/bin/env bash
# A single-node SLURM on this machine, for trying daskfair's batch jobs and for its tests.
#
#   cluster/local-slurm.sh install        # as root: apt-get install slurm-wlm munge
#   cluster/local-slurm.sh start DIR      # writes DIR/slurm.conf, starts munged, slurmctld, slurmd
#   export SLURM_CONF=DIR/slurm.conf      # then sbatch, squeue, scancel and dask-jobqueue use it
#   cluster/local-slurm.sh stop DIR       # stops the daemons this script started (by pid)
#
# Everything SLURM writes (state, spool, logs, pid files) stays under DIR; nothing in /etc/slurm
# is touched, so a machine's own SLURM is not disturbed (give DIR's slurm.conf through
# SLURM_CONF). munged is the exception: SLURM's clients find it at its default socket
# /run/munge/munge.socket.2, so a munged already running there is used as it is.
#
# Runs as root (slurmd starts jobs as their users). No systemd and no cgroups are needed:
# process tracking by the process tree (proctrack/linuxproc), no task confinement.
set -euo pipefail

usage() {
    sed -n '2,8p' "$0" >&2
    exit 2
}

need_root() {
    if [ "$(id -u)" != 0 ]; then
        echo "local-slurm: '$1' must run as root (slurmd starts the jobs as their users)." >&2
        exit 1
    fi
}

install_packages() {
    need_root install
    if command -v slurmctld >/dev/null && command -v munged >/dev/null; then
        echo "local-slurm: slurm-wlm and munge are installed"
        return
    fi
    export DEBIAN_FRONTEND=noninteractive
    # a fresh machine may have no package lists yet
    apt-get install -y -q slurm-wlm munge >/dev/null 2>&1 \
        || { apt-get update -q >/dev/null && apt-get install -y -q slurm-wlm munge >/dev/null; }
}

write_conf() {
    local dir=$1 host cpus mem_mb
    host=$(hostname -s)
    cpus=$(nproc)
    # leave a quarter of the memory (at least 1 GiB) to everything else
    mem_mb=$(awk '/MemTotal/ {m = int($2 / 1024); r = int(m / 4); if (r < 1024) r = 1024;
                              print m - r}' /proc/meminfo)
    mkdir -p "$dir/state" "$dir/spool" "$dir/log"
    cat >"$dir/slurm.conf" <<EOF
# written by daskfair's cluster/local-slurm.sh: a one-node SLURM for tests
ClusterName=daskfair-local
SlurmctldHost=$host
SlurmUser=root
SlurmctldPort=${DASKFAIR_SLURMCTLD_PORT:-6817}
SlurmdPort=${DASKFAIR_SLURMD_PORT:-6818}
AuthType=auth/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=$((mem_mb / cpus))
ReturnToService=2
MailProg=/bin/true
MpiDefault=none
KillWait=5
InactiveLimit=0
MinJobAge=60
NodeName=$host CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
}

start_munge() {
    if [ -S /run/munge/munge.socket.2 ] && munge -n </dev/null >/dev/null 2>&1; then
        return
    fi
    mkdir -p /run/munge /var/log/munge /var/lib/munge
    chown munge:munge /run/munge /var/log/munge /var/lib/munge
    chmod 0755 /run/munge
    if [ ! -s /etc/munge/munge.key ]; then
        echo "local-slurm: /etc/munge/munge.key is missing (reinstall munge)." >&2
        exit 1
    fi
    runuser -u munge -- /usr/sbin/munged
    touch "$1/munged.started"  # stop only a munged this script started
}

wait_for_node() {
    local conf=$1/slurm.conf i state ours daemon
    for i in $(seq 1 60); do
        state=$(SLURM_CONF=$conf sinfo -h -N -o '%t' 2>/dev/null | head -1 || true)
        # a trailing * means "not responding": not ready. The daemons must be this folder's
        # (a controller already on the port would answer for a slurmctld that could not bind)
        ours=yes
        for daemon in slurmctld slurmd; do
            if [ ! -s "$1/$daemon.pid" ]; then
                ours=no  # not written yet
            elif ! kill -0 "$(cat "$1/$daemon.pid")" 2>/dev/null; then
                echo "local-slurm: $daemon exited (a port in use? DASKFAIR_SLURMCTLD_PORT and" \
                     "DASKFAIR_SLURMD_PORT choose others); see $1/log/$daemon.log" >&2
                return 1
            fi
        done
        case "$ours:$state" in
            yes:idle|yes:mix|yes:alloc)
                echo "local-slurm: node $(hostname -s) is $state"; return ;;
        esac
        sleep 0.5
    done
    echo "local-slurm: the node did not become idle within 30 s (state '${state:-none}');" \
         "see $1/log/slurmctld.log and $1/log/slurmd.log" >&2
    return 1
}

start() {
    need_root start
    local dir
    dir=$(mkdir -p "$1" && cd "$1" && pwd)
    command -v slurmctld >/dev/null || {
        echo "local-slurm: slurmctld not found; run '$0 install' first." >&2; exit 1; }
    write_conf "$dir"
    start_munge "$dir"
    # -c: start clean, without the jobs of an earlier run in the same folder
    if ! { slurmctld -c -f "$dir/slurm.conf" && slurmd -f "$dir/slurm.conf" \
           && wait_for_node "$dir"; }; then
        stop "$dir" >/dev/null
        echo "local-slurm: start failed; the daemons it started are stopped" >&2
        exit 1
    fi
    echo "export SLURM_CONF=$dir/slurm.conf"
}

stop_pid() {
    local file=$1 pid i
    [ -s "$file" ] || return 0
    pid=$(cat "$file")
    kill "$pid" 2>/dev/null || return 0
    for i in $(seq 1 50); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
}

stop() {
    need_root stop
    local dir=$1 i jobs
    # every job of this SLURM, whoever submitted it; wait (up to 15 s) until they are gone
    # so that no job step outlives slurmd
    # (only this folder's controller's: another one may answer on the same port)
    jobs=
    if [ -s "$dir/slurmctld.pid" ] && kill -0 "$(cat "$dir/slurmctld.pid")" 2>/dev/null; then
        jobs=$(SLURM_CONF=$dir/slurm.conf squeue -h -o %i 2>/dev/null || true)
    fi
    if [ -n "$jobs" ]; then
        # shellcheck disable=SC2086
        SLURM_CONF=$dir/slurm.conf scancel --quiet $jobs 2>/dev/null || true
        for i in $(seq 1 30); do
            [ -z "$(SLURM_CONF=$dir/slurm.conf squeue -h -t running,completing,pending \
                    2>/dev/null)" ] && break
            sleep 0.5
        done
    fi
    stop_pid "$dir/slurmd.pid"
    stop_pid "$dir/slurmctld.pid"
    # munged is shared: stopped only if this script started it and no other SLURM runs
    if [ -e "$dir/munged.started" ]; then
        pgrep -x slurmctld >/dev/null || stop_pid /run/munge/munged.pid
        rm -f "$dir/munged.started"
    fi
    echo "local-slurm: stopped"
}

case "${1:-}" in
    install) install_packages ;;
    start) [ $# -eq 2 ] || usage; start "$2" ;;
    stop) [ $# -eq 2 ] || usage; stop "$2" ;;
    *) usage ;;
esac
