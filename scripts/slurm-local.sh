#!/usr/bin/env bash
# A Slurm cluster on this machine, for running the scale-out work locally:
# one controller (slurmctld), munged for authentication, and one node
# named "localhost" or N nodes, each a slurmd with a host of its own, from
# Debian's packages.
#
#   scripts/slurm-local.sh start [--nodes N]  install if needed, configure, start, wait for the nodes
#   scripts/slurm-local.sh stop               stop the daemons this script started, remove the nodes' links
#   scripts/slurm-local.sh status             report the daemons and the nodes; exit 0 only when usable
#   scripts/slurm-local.sh kill-node NODE     SIGKILL every process of NODE (its slurmd and the
#                                             tasks it runs): a node lost, for the node-loss tests
#
# With --nodes N (N >= 2) the nodes are pccx-node1 .. pccx-nodeN. Each
# slurmd runs in a network namespace (`ip netns`, named after the node)
# and a UTS namespace of its own: its own host name, which the tasks it
# runs see, and its own address (10.199.0.11 ...) on a private bridge,
# pccx-br0 (10.199.0.1, where slurmctld answers), that start creates and
# stop removes. Traffic stays between this machine's own namespaces. The
# filesystem is shared, as on a cluster with a shared home: munged's
# socket, the spool and log directories (one per node) and the work.
#
# Written for a machine where PID 1 is not systemd and policy-rc.d refuses
# service starts, so the daemons are started directly, not through
# init scripts. PID 1 there does not reap orphans either: a daemon that has
# exited can stay behind as a zombie, so "is it running" is answered from
# State in /proc/PID/status, never from kill -0 (which succeeds on a zombie).
#
# Settings, from the environment:
#   SLURM_LOCAL_START_TIMEOUT   seconds to wait for the node to be idle (30)
#   SLURM_LOCAL_CTLD_TIMEOUT    seconds to wait for slurmctld to exit on stop (120)
set -euo pipefail

readonly CONF=/etc/slurm/slurm.conf
# The first line of the slurm.conf we write: how start tells its own file
# from one somebody else wrote (which it backs up before replacing).
readonly MARK="# Written by pccx-cosim scripts/slurm-local.sh; start rewrites this file."
readonly STATE_DIR=/run/pccx-slurm-local
readonly STATE_FILE=$STATE_DIR/pids
readonly LOG_DIR=/var/log/slurm
# The node names of this start (set by --nodes), or of the running
# cluster (read from the state file) for status, stop and kill-node.
NODES=(localhost)
readonly BRIDGE=pccx-br0
readonly NET=10.199.0
readonly PACKAGES=(slurmctld slurmd slurm-client munge)
readonly START_TIMEOUT=${SLURM_LOCAL_START_TIMEOUT:-30}
readonly CTLD_TIMEOUT=${SLURM_LOCAL_CTLD_TIMEOUT:-120}
# Daemons in start order; stop walks the list backwards. A node's slurmd
# is `slurmd@NODE`.
DAEMONS=(munged slurmctld slurmd@localhost)

# The daemons for NODES.
set_daemons() {
  local n
  DAEMONS=(munged slurmctld)
  for n in "${NODES[@]}"; do DAEMONS+=("slurmd@$n"); done
}

multi_node() { [ "${NODES[0]}" != localhost ]; }

# The nodes the state file records (its slurmd@ lines), one per line.
recorded_nodes() {
  [ -r "$STATE_FILE" ] || return 0
  awk '$1 ~ /^slurmd@/ {sub(/^slurmd@/, "", $1); print $1}' "$STATE_FILE"
}

# The nodes of the cluster the state file records, if any; else NODES
# stays as it is.
nodes_from_state() {
  local found
  mapfile -t found < <(recorded_nodes)
  if [ "${#found[@]}" -gt 0 ]; then
    NODES=("${found[@]}")
    set_daemons
  fi
}

msg() { echo "slurm-local: $*"; }
err() { echo "slurm-local: error: $*" >&2; }
die() { err "$@"; exit 1; }

pid_file_of() {
  case $1 in
    munged) echo /run/munge/munged.pid ;;
    slurmctld) echo /run/slurm/slurmctld.pid ;;
    slurmd@*) echo "/run/slurm/slurmd-${1#slurmd@}.pid" ;;
  esac
}

# The process name (comm) of a daemon: slurmd@NODE is a slurmd.
comm_of() { echo "${1%%@*}"; }

log_of() {
  case $1 in
    munged) echo /var/log/munge/munged.log ;;
    slurmd@*) echo "$LOG_DIR/slurmd-${1#slurmd@}.log" ;;
    *) echo "$LOG_DIR/$1.log" ;;
  esac
}

# True when PID is a live process (not a zombie) whose name is NAME. The
# name check keeps a stale PID file, or a PID reused since, from making us
# report or signal an unrelated process.
alive() {
  local pid=$1 name=$2 state comm
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  [ -r "/proc/$pid/status" ] || return 1
  state=$(awk '/^State:/ {print $2; exit}' "/proc/$pid/status" 2>/dev/null) || return 1
  case $state in Z | X | '') return 1 ;; esac
  comm=$(cat "/proc/$pid/comm" 2>/dev/null) || return 1
  [ "$comm" = "$name" ]
}

is_zombie() {
  [ -r "/proc/$1/status" ] && awk '/^State:/ {exit !($2 == "Z")}' "/proc/$1/status" 2>/dev/null
}

# The PID recorded for NAME in the state file, and how it got there
# ("started" by this script, or "found" already running).
state_pid() { [ -r "$STATE_FILE" ] && awk -v n="$1" '$1 == n {print $2; exit}' "$STATE_FILE"; }
state_origin() { [ -r "$STATE_FILE" ] && awk -v n="$1" '$1 == n {print $3; exit}' "$STATE_FILE"; }

# The PID of a live NAME: the state file's first, else the daemon's own
# PID file's (a daemon running without our state file, e.g. after the
# state file was lost). Prints nothing and fails when none is alive.
running_pid() {
  local name=$1 pid comm
  comm=$(comm_of "$name")
  pid=$(state_pid "$name" || true)
  if [ -n "$pid" ] && alive "$pid" "$comm"; then echo "$pid"; return 0; fi
  pid=$(cat "$(pid_file_of "$name")" 2>/dev/null || true)
  if [ -n "$pid" ] && alive "$pid" "$comm"; then echo "$pid"; return 0; fi
  return 1
}

# The node's compact state as sinfo prints it (idle, mix, alloc, down*,
# drain, ...), or nothing when the controller does not answer. timeout
# because a controller that accepts connections but hangs would otherwise
# hang us too.
node_state() {
  timeout 10 sinfo -h -N -n "$1" -o %t 2>/dev/null | head -n 1 | tr -d ' ' || true
}

node_usable() {
  case $1 in idle | mix | alloc) return 0 ;; *) return 1 ;; esac
}

show_log_tail() {
  local f=$1
  if [ -s "$f" ]; then
    echo "---- last lines of $f ----" >&2
    tail -n 20 "$f" >&2
    echo "----" >&2
  fi
}

need_root() {
  [ "$(id -u)" = 0 ] || die "$1 must run as root (it starts daemons and writes /etc/slurm)"
}

# One invocation at a time: two starts racing would both find nothing
# running and start everything twice.
take_lock() {
  mkdir -p "$STATE_DIR"
  exec 9>"$STATE_DIR/lock"
  flock -w 60 9 || die "another slurm-local.sh has held $STATE_DIR/lock for 60 s"
}

# ---------------------------------------------------------------- install

packages_present() {
  [ -x /usr/sbin/slurmctld ] && [ -x /usr/sbin/slurmd ] && [ -x /usr/sbin/munged ] &&
    command -v sinfo >/dev/null 2>&1 && command -v sbatch >/dev/null 2>&1
}

apt_lists_empty() {
  ! compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null
}

install_packages() {
  packages_present && return 0
  msg "installing ${PACKAGES[*]} with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  # Lists are refreshed only when there are none, or when an install from
  # the present ones fails (e.g. a version they name has left the mirror):
  # an update costs time and network for nothing otherwise.
  if apt_lists_empty; then
    msg "apt lists are empty; running apt-get update"
    apt-get update -qq
  fi
  if ! apt-get install -y -qq "${PACKAGES[@]}" >/dev/null; then
    msg "apt-get install failed; running apt-get update and trying again"
    apt-get update -qq
    apt-get install -y -qq "${PACKAGES[@]}" >/dev/null || die "apt-get install ${PACKAGES[*]} failed"
  fi
  packages_present || die "installed ${PACKAGES[*]} but slurmctld, slurmd, munged or sinfo is still missing"
}

# ---------------------------------------------------------------- configuration

write_conf_text() {
  # CPUs from nproc: slurmd drains a node configured with more CPUs than it
  # finds, and on this machine nproc gives the 2 the notes measured. With
  # several nodes on one machine each gets one CPU (fewer than a node has
  # is accepted), so that an array spreads over the nodes.
  local cpus ctld=localhost nodes_text k
  cpus=$(nproc)
  if multi_node; then
    cpus=1
    # Named localhost, so slurmctld knows itself; the nodes reach it at
    # the bridge's address.
    ctld="localhost($NET.1)"
    nodes_text=""
    for k in "${!NODES[@]}"; do
      nodes_text+="NodeName=${NODES[k]} NodeAddr=$NET.$((11 + k)) CPUs=$cpus State=UNKNOWN"$'\n'
    done
  else
    nodes_text="NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN"$'\n'
  fi
  local all_nodes
  all_nodes=$(IFS=,; echo "${NODES[*]}")
  cat <<EOF
$MARK
# A local cluster: controller and ${#NODES[@]} node(s) on this machine. One
# node is named localhost (slurmd -N localhost), so it does not depend on
# the hostname; several are pccx-node1 ... in namespaces of their own
# (scripts/slurm-local.sh). Edits here are lost at the next start; change
# the script.
ClusterName=pccx-local
SlurmctldHost=$ctld
SlurmctldPort=6817
SlurmdPort=6818

# Authentication through munged. cred_expire=10: a job credential stays
# valid, and a requeued task cannot start again until it has expired;
# the default 120 s held every requeue for two minutes.
AuthType=auth/munge
CredType=cred/munge
AuthInfo=cred_expire=10

# slurmctld drops to the slurm user; slurmd stays root so it can run a
# job as any user, root included (tests run as root).
SlurmUser=slurm
SlurmdUser=root
DisableRootJobs=NO

# %n: the node's name, so that the slurmds on this one filesystem keep
# apart.
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd-%n
SlurmctldPidFile=/run/slurm/slurmctld.pid
SlurmdPidFile=/run/slurm/slurmd-%n.pid
SlurmctldLogFile=$LOG_DIR/slurmctld.log
SlurmdLogFile=$LOG_DIR/slurmd-%n.log

# No cgroups, no accounting database: plain process tracking, and a
# text file with one line per finished job (or array task), since sacct
# needs slurmdbd.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$LOG_DIR/jobcomp.log
MpiDefault=none
MailProg=/bin/true

SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core

# A node that went down (e.g. slurmd killed) comes back by itself once
# slurmd registers again.
ReturnToService=2
# Finished jobs stay visible in squeue -t all for 10 minutes, so a
# waiting loop sees COMPLETED / FAILED rather than an unknown job id.
MinJobAge=600
# A dead slurmd is noticed after 10 s rather than 300 s.
SlurmdTimeout=10
# SIGTERM, then SIGKILL 5 s later, at a time limit or scancel.
KillWait=5

${nodes_text}PartitionName=debug Nodes=$all_nodes Default=YES MaxTime=INFINITE State=UP
EOF
}

# Writes $CONF when it differs from what we want. Sets CONF_CHANGED=1 when
# it did, so start can tell the user a running cluster needs a restart.
CONF_CHANGED=0
install_conf() {
  local tmp backup
  mkdir -p /etc/slurm
  tmp=$(mktemp /etc/slurm/.slurm.conf.XXXXXX)
  write_conf_text >"$tmp"
  chmod 0644 "$tmp"
  if [ -f "$CONF" ] && cmp -s "$tmp" "$CONF"; then
    rm -f "$tmp"
    return 0
  fi
  if [ -f "$CONF" ] && [ "$(head -n 1 "$CONF")" != "$MARK" ]; then
    backup=$CONF.bak.$(date +%Y%m%d-%H%M%S)
    cp -p "$CONF" "$backup"
    msg "backed up an existing $CONF that this script did not write to $backup"
  fi
  mv -f "$tmp" "$CONF"
  msg "wrote $CONF"
  CONF_CHANGED=1
}

ensure_dirs() {
  # munged insists its directories are not writable by others and belong
  # to the user it runs as.
  install -d -o munge -g munge -m 0700 /etc/munge /var/lib/munge
  install -d -o munge -g munge -m 0700 /var/log/munge
  install -d -o munge -g munge -m 0755 /run/munge
  # slurmctld runs as slurm and writes its state, PID file, log and the
  # jobcomp file; slurmd is root and writes its spool and log.
  install -d -o slurm -g slurm -m 0755 /run/slurm /var/lib/slurm /var/log/slurm
  install -d -o slurm -g slurm -m 0700 /var/lib/slurm/slurmctld
  local n
  for n in "${NODES[@]}"; do install -d -o root -g root -m 0755 "/var/lib/slurm/slurmd-$n"; done
  if [ ! -s /etc/munge/munge.key ]; then
    # Debian's postinst normally made it; recreate if somebody removed it.
    msg "creating /etc/munge/munge.key"
    if command -v mungekey >/dev/null 2>&1; then
      runuser -u munge -- mungekey --create --keyfile=/etc/munge/munge.key
    else
      dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
    fi
  fi
  chown munge:munge /etc/munge/munge.key
  chmod 0400 /etc/munge/munge.key
}

# ---------------------------------------------------------------- the nodes' network

# The bridge (10.199.0.1) and, per node, a network namespace named after it
# with one end of a veth pair (eth0, 10.199.0.11 ...) whose other end
# (pccx-vK) is on the bridge. Idempotent.
net_up() {
  local k n veth
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link add "$BRIDGE" type bridge
    ip addr add "$NET.1/24" dev "$BRIDGE"
  fi
  ip link set "$BRIDGE" up
  for k in "${!NODES[@]}"; do
    n=${NODES[k]}
    veth=pccx-v$((k + 1))
    [ -e "/run/netns/$n" ] || ip netns add "$n"
    if ! ip link show "$veth" >/dev/null 2>&1; then
      ip link add "$veth" type veth peer name eth0 netns "$n"
      ip link set "$veth" master "$BRIDGE" up
      ip -n "$n" addr add "$NET.$((11 + k))/24" dev eth0
      ip -n "$n" link set lo up
      ip -n "$n" link set eth0 up
    fi
  done
}

# SIGKILL to every process in node N's network namespace.
kill_namespace() {
  local pids
  [ -e "/run/netns/$1" ] || return 0
  pids=$(ip netns pids "$1" 2>/dev/null || true)
  [ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
}

# Removes what net_up made (a deleted namespace takes its veth end along,
# and with it the pair); processes still in a namespace are killed first.
net_down() {
  local n
  for n in /run/netns/pccx-node*; do
    [ -e "$n" ] || continue
    n=${n##*/}
    kill_namespace "$n"
    ip netns del "$n" 2>/dev/null || true
  done
  if ip link show "$BRIDGE" >/dev/null 2>&1; then ip link del "$BRIDGE"; fi
}

# ---------------------------------------------------------------- start

# Launches one daemon (it forks into the background itself) and waits for
# its PID file to name a live process. Prints the PID.
launch() {
  local name=$1 pidfile out pid deadline
  pidfile=$(pid_file_of "$name")
  out=$STATE_DIR/$name.out
  # A PID file left by a daemon that died (or is a zombie) would make us
  # read the old PID below.
  rm -f "$pidfile"
  # Their stdio goes to a file: what a daemon prints before its log file
  # is open (a config error) lands there, and no daemon keeps our caller's
  # stdout open after we exit.
  local cmd
  case $name in
    munged) cmd=(runuser -u munge -- /usr/sbin/munged) ;;
    slurmctld) cmd=(/usr/sbin/slurmctld) ;;
    slurmd@*)
      local node=${name#slurmd@}
      if multi_node; then
        # Its own network and host name: the namespace net_up made, and a
        # new UTS namespace where the host name is the node's. nsenter, not
        # `ip netns exec`: that remounts /sys for the namespace, which hides
        # /sys/fs/cgroup, and slurmd will not start without it.
        cmd=(nsenter "--net=/run/netns/$node" unshare --uts sh -c "hostname $node && exec /usr/sbin/slurmd -N $node")
      else
        cmd=(/usr/sbin/slurmd -N "$node")
      fi
      ;;
  esac
  # 9>&-: the daemon must not inherit our lock file descriptor, or it
  # would hold the lock for as long as it runs and block every later call.
  if ! "${cmd[@]}" </dev/null >"$out" 2>&1 9>&-; then
    err "$name did not start (${cmd[*]} failed)"
    show_log_tail "$out"
    show_log_tail "$(log_of "$name")"
    return 1
  fi
  deadline=$((SECONDS + 10))
  while [ "$SECONDS" -lt "$deadline" ]; do
    pid=$(cat "$pidfile" 2>/dev/null || true)
    if [ -n "$pid" ] && alive "$pid" "$(comm_of "$name")"; then
      echo "$pid"
      return 0
    fi
    sleep 0.2
  done
  err "$name forked but no live process appeared in $pidfile within 10 s"
  show_log_tail "$out"
  show_log_tail "$(log_of "$name")"
  return 1
}

# Sets NAME's line (NAME PID ORIGIN) in the state file, keeping the
# others: the file is read again for the next daemon, and what it says of
# the daemons not yet looked at must survive until they are.
record_state() {
  local name=$1 pid=$2 origin=$3 tmp=$STATE_FILE.tmp
  {
    [ -r "$STATE_FILE" ] && awk -v n="$name" '$1 != n' "$STATE_FILE"
    echo "$name $pid $origin"
  } >"$tmp"
  mv -f "$tmp" "$STATE_FILE"
}

cmd_start() {
  local want=1
  while [ $# -gt 0 ]; do
    case $1 in
      --nodes)
        [ $# -ge 2 ] && [[ $2 =~ ^[1-9][0-9]?$ ]] || die "--nodes takes a number of nodes, 1 to 99"
        want=$2
        shift 2
        ;;
      *) die "start: unknown argument '$1' (start [--nodes N])" ;;
    esac
  done
  need_root start
  take_lock
  install_packages

  # A running cluster of another shape is not reshaped under its jobs.
  local running=()
  mapfile -t running < <(recorded_nodes)
  if [ "$want" -ge 2 ]; then
    local k
    NODES=()
    for ((k = 1; k <= want; k++)); do NODES+=("pccx-node$k"); done
  fi
  set_daemons
  if [ "${#running[@]}" -gt 0 ] && running_pid slurmctld >/dev/null && [ "${running[*]}" != "${NODES[*]}" ]; then
    die "a cluster of ${#running[@]} node(s) (${running[*]}) runs; stop it before starting ${#NODES[@]}"
  fi

  local name pid origin started_any=0
  install_conf
  ensure_dirs
  if multi_node; then net_up; fi

  for name in "${DAEMONS[@]}"; do
    if pid=$(running_pid "$name"); then
      # Keep what the state file says about where it came from; a daemon
      # we did not start is "found", and stop leaves it alone.
      origin=$(state_origin "$name" || true)
      if [ "$(state_pid "$name" || true)" != "$pid" ] || [ -z "$origin" ]; then origin=found; fi
      msg "$name already running (pid $pid)"
      if [ "$name" = slurmctld ] && [ "$CONF_CHANGED" = 1 ]; then
        msg "note: $CONF changed while slurmctld was running; run stop, then start, to apply it"
      fi
    else
      # slurmd's start time (to the second, in slurmctld's format), to
      # know below when this slurmd, not an earlier one, has registered.
      if [[ $name == slurmd@* ]]; then SLURMD_LAUNCHED[${name#slurmd@}]=$(date +%Y-%m-%dT%H:%M:%S); fi
      pid=$(launch "$name") ||
        die "start failed at $name; the daemons started so far are in $STATE_FILE (run stop)"
      origin=started
      started_any=1
      msg "started $name (pid $pid)"
    fi
    # Recorded after each daemon, so a failure further on still leaves
    # stop the PIDs to stop.
    record_state "$name" "$pid" "$origin"
    if [ "$name" = munged ] && ! munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
      # slurmctld would start without a working munged and then fail every
      # RPC; check the credential round trip here, where the cause is clear.
      show_log_tail "$(log_of munged)"
      die "munged runs (pid $pid) but munge -n | unmunge fails"
    fi
  done

  local node
  for node in "${NODES[@]}"; do wait_node_usable "$node"; done
  [ "$started_any" = 1 ] || msg "cluster was already up"
}

# When this start launched each node's slurmd (nodes it found running are
# not in it).
declare -A SLURMD_LAUNCHED=()
# True when the slurmd of node $1 started by this run (if it started one)
# has registered with slurmctld.
# Needed because slurmctld restores the node's last state from its state
# files: it can say "idle" before the new slurmd has said a word.
slurmd_registered() {
  local launched=${SLURMD_LAUNCHED[$1]:-}
  [ -n "$launched" ] || return 0
  local t
  t=$(timeout 10 scontrol show node "$1" 2>/dev/null | grep -o 'SlurmdStartTime=[^ ]*' | cut -d= -f2 || true)
  # Same fixed-width ISO format on both sides, so string order is time order.
  [ -n "$t" ] && [ "$t" != None ] && [[ ! "$t" < "$launched" ]]
}

# Polls the node state until idle/mix/alloc or the deadline. A node left
# down or drained by an earlier crash is resumed: ReturnToService=2 brings
# back a node that was down only for not responding, but not one drained
# for a reason (e.g. "Duplicate jobid" after slurmctld lost its state).
wait_node_usable() {
  local node=$1 t0=${EPOCHREALTIME/./} deadline=$((SECONDS + START_TIMEOUT)) state="" last_resume=-100
  while :; do
    state=$(node_state "$node")
    if node_usable "$state" && slurmd_registered "$node"; then
      msg "node $node is $state after $(((${EPOCHREALTIME/./} - t0) / 1000)) ms; partition debug is ready"
      return 0
    fi
    case $state in
      down* | drain* | drng* | fail*)
        if [ $((SECONDS - last_resume)) -ge 3 ]; then
          local reason
          reason=$(timeout 10 sinfo -h -N -n "$node" -o %E 2>/dev/null | head -n 1 || true)
          msg "node $node is $state (reason: ${reason:-none}); resuming it"
          scontrol update nodename="$node" state=resume >/dev/null 2>&1 || true
          last_resume=$SECONDS
        fi
        ;;
    esac
    if [ "$SECONDS" -ge "$deadline" ]; then
      err "node $node is not idle after ${START_TIMEOUT} s (state: ${state:-no answer from slurmctld})"
      show_log_tail "$(log_of "slurmd@$node")"
      show_log_tail "$(log_of slurmctld)"
      exit 1
    fi
    sleep 0.3
  done
}

# ---------------------------------------------------------------- stop

# Waits until PID is gone or a zombie (which is as good as gone: it holds
# no ports or files, only a process table slot PID 1 will never free).
wait_gone() {
  local pid=$1 name=$2 secs=$3 deadline
  deadline=$((SECONDS + secs))
  while alive "$pid" "$name"; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.2
  done
  return 0
}

stop_one() {
  local name=$1 pid=$2 t0=$SECONDS comm
  comm=$(comm_of "$name")
  if ! alive "$pid" "$comm"; then
    if is_zombie "$pid"; then
      msg "$name (pid $pid) already exited (zombie)"
    else
      msg "$name (pid $pid) not running"
    fi
    return 0
  fi
  kill -TERM "$pid" 2>/dev/null || true
  case $name in
    slurmctld)
      # On SIGTERM slurmctld saves its job and node state and exits. It is
      # never SIGKILLed lightly: once, killed that way, it lost an array's
      # state, drained the node ("Duplicate jobid") and left a task held
      # forever. So wait long, remind it once halfway, and kill only a
      # controller that has clearly hung.
      if ! wait_gone "$pid" "$comm" $((CTLD_TIMEOUT / 2)); then
        msg "slurmctld (pid $pid) still running after $((CTLD_TIMEOUT / 2)) s; sending SIGTERM again"
        kill -TERM "$pid" 2>/dev/null || true
        if ! wait_gone "$pid" "$comm" $((CTLD_TIMEOUT / 2)); then
          err "slurmctld (pid $pid) ignored SIGTERM for $CTLD_TIMEOUT s; sending SIGKILL. Its saved state may be stale: check squeue and sinfo after the next start"
          kill -KILL "$pid" 2>/dev/null || true
          wait_gone "$pid" "$comm" 10 || die "slurmctld (pid $pid) survived SIGKILL"
        fi
      fi
      ;;
    *)
      # slurmd and munged keep no state that a kill loses (running job
      # steps belong to slurmstepd, which is not killed here), so a short
      # wait before SIGKILL is enough.
      if ! wait_gone "$pid" "$comm" 15; then
        msg "$name (pid $pid) still running after 15 s; sending SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
        wait_gone "$pid" "$comm" 10 || die "$name (pid $pid) survived SIGKILL"
      fi
      ;;
  esac
  msg "stopped $name (pid $pid) in $((SECONDS - t0)) s"
}

cmd_stop() {
  need_root stop
  take_lock
  nodes_from_state
  if [ ! -s "$STATE_FILE" ]; then
    net_down
    msg "nothing to stop: no $STATE_FILE (this script started nothing that is still recorded)"
    local name pid
    for name in "${DAEMONS[@]}"; do
      if pid=$(running_pid "$name"); then
        msg "note: $name is running (pid $pid) but was not started by this script; left alone"
      fi
    done
    return 0
  fi
  local i name pid origin
  for ((i = ${#DAEMONS[@]} - 1; i >= 0; i--)); do
    name=${DAEMONS[i]}
    pid=$(state_pid "$name" || true)
    [ -n "$pid" ] || continue
    origin=$(state_origin "$name" || true)
    if [ "$origin" != started ]; then
      msg "$name (pid $pid) was already running before start; left alone"
      continue
    fi
    stop_one "$name" "$pid"
  done
  # The nodes' task processes (slurmstepd and what it runs outlive a
  # stopped slurmd), then their namespaces and the bridge.
  net_down
  rm -f "$STATE_FILE"
  msg "stopped"
}

# ---------------------------------------------------------------- status

cmd_status() {
  local name pid ok=1 state origin node
  nodes_from_state
  for name in "${DAEMONS[@]}"; do
    if pid=$(running_pid "$name"); then
      origin=$(state_origin "$name" || true)
      [ "$(state_pid "$name" || true)" = "$pid" ] || origin="not started by this script"
      msg "$name: running (pid $pid${origin:+, $origin})"
    else
      pid=$(state_pid "$name" || true)
      if [ -n "$pid" ] && is_zombie "$pid"; then
        msg "$name: not running (pid $pid exited, zombie)"
      else
        msg "$name: not running"
      fi
      ok=0
    fi
  done
  for node in "${NODES[@]}"; do
    if running_pid slurmctld >/dev/null; then
      state=$(node_state "$node")
      msg "node $node: ${state:-no answer from slurmctld}"
      node_usable "$state" || ok=0
    else
      msg "node $node: unknown (slurmctld not running)"
      ok=0
    fi
  done
  if [ "$ok" = 1 ]; then
    msg "cluster is up"
    return 0
  fi
  msg "cluster is not usable"
  return 1
}

# ---------------------------------------------------------------- kill-node

cmd_kill_node() {
  local node=${1:-}
  need_root kill-node
  nodes_from_state
  multi_node || die "kill-node needs a cluster started with --nodes N (N >= 2)"
  [[ " ${NODES[*]} " == *" $node "* ]] || die "kill-node: '$node' is not a node of this cluster (${NODES[*]})"
  local pids
  pids=$(ip netns pids "$node" 2>/dev/null | tr '\n' ' ')
  kill_namespace "$node"
  msg "killed node $node: SIGKILL to ${pids:-no process}"
}

case ${1:-} in
  start) shift; cmd_start "$@" ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  kill-node) cmd_kill_node "${2:-}" ;;
  *)
    echo "usage: $0 start [--nodes N]|stop|status|kill-node NODE" >&2
    exit 2
    ;;
esac
