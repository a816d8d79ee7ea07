#!/usr/bin/env bash
# comm/README.md's Slurm lines against a real single-machine Slurm: munged, slurmctld and slurmd
# started here on private paths, then `srun --mpi=pmix` and an `sbatch` script running `mpirun`
# each run comm.host-fabric over 2 ranks, and the result files are checked; `srun -n 2` without
# --mpi is refused in one line.
# Usage: slurm_check.sh NODEAUDIT_BINARY COMM_README
# Exit 0 pass, 1 fail, 77 skip (not root, Slurm or munge missing, a daemon cannot start here).
# Nothing outside a private temp dir is touched: the system's /etc/slurm and /etc/munge are never
# read for config (SLURM_CONF, munged's --key-file/--socket), and every daemon started is stopped
# on every exit path.
set -euo pipefail

nodeaudit=${1:?usage: slurm_check.sh NODEAUDIT_BINARY COMM_README}
readme=${2:?usage: slurm_check.sh NODEAUDIT_BINARY COMM_README}
work=""
daemon_pids=()

# With NODEAUDIT_EXPECT_SLURM=1 (CI on a machine with Slurm and munge) a skip is a failure.
skip() {
  if [[ ${NODEAUDIT_EXPECT_SLURM:-} == 1 ]]; then echo "FAIL: NODEAUDIT_EXPECT_SLURM=1, yet: $*"; exit 1; fi
  echo "SKIP: $*"
  exit 77
}
fail() { echo "FAIL: $*"; show_logs; exit 1; }

show_logs() {
  [[ -n $work ]] || return 0
  local log
  for log in "$work"/log/*.log; do
    [[ -s $log ]] && { echo "--- $log (last 15 lines)"; tail -n 15 "$log"; }
  done
  return 0
}

# Stops what this script started (by PID, never by name) and removes the temp dir.
cleanup() {
  local pid
  cancel_jobs
  for pid in "${daemon_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${daemon_pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  kill_leftovers
  [[ -n $work ]] && rm -rf "$work"
  return 0
}

# A job still running when the test ends (a timeout, a failure) is cancelled through the cluster
# while slurmctld and slurmd are still up to pass the signal on.
cancel_jobs() {
  [[ -n $work && -f $work/slurm.conf ]] || return 0
  SLURM_CONF=$work/slurm.conf timeout 5 scancel --user=root 2>/dev/null || true
  for _ in $(seq 50); do
    [[ -z $(SLURM_CONF=$work/slurm.conf timeout 5 squeue -h 2>/dev/null) ]] && break
    sleep 0.2
  done
}

# slurmstepd and a job's ranks outlive slurmd; anything still running in this test's dirs is ours.
kill_leftovers() {
  [[ -n $work ]] || return 0
  local proc
  for proc in /proc/[0-9]*; do
    [[ $(readlink "$proc/cwd" 2>/dev/null) == "$work"/* ]] && kill -KILL "${proc#/proc/}" 2>/dev/null
  done
  return 0
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

check_prerequisites() {
  [[ $(id -u) -eq 0 ]] || skip "needs root (slurmd starts each job as the user who submitted it)"
  local cmd
  for cmd in munged mungekey slurmctld slurmd srun sbatch scontrol squeue scancel sinfo mpirun ss python3; do
    command -v "$cmd" >/dev/null || skip "$cmd not installed (Debian: slurm-wlm munge openmpi-bin)"
  done
  [[ -x $nodeaudit ]] || fail "no nodeaudit binary at $nodeaudit"
  # Slurm's pmix plug-in is what lets srun start Open MPI ranks without mpirun.
  [[ -n $(find /usr/lib -path '*slurm*' -name mpi_pmix.so -print -quit 2>/dev/null) ]] ||
    skip "Slurm has no mpi_pmix plug-in"
}

# A TCP port nobody listens on, other than $1; this script may run twice at once, so no fixed port.
free_port() {
  local port
  for _ in $(seq 50); do
    port=$((20000 + RANDOM % 30000))
    [[ $port != "${1:-}" ]] || continue
    ss -Htln "sport = :$port" | grep -q . || { echo "$port"; return 0; }
  done
  fail "no free TCP port found"
}

start_munge() {
  mkdir -p "$work/munge" && chmod 755 "$work/munge"  # clients need to reach the socket
  mungekey --create --keyfile="$work/munge/munge.key" >/dev/null 2>&1 || skip "mungekey cannot create a key"
  # --force: munged refuses a socket under a world-writable ancestor (/tmp) without it.
  munged --foreground --force --key-file="$work/munge/munge.key" --socket="$work/munge/munge.socket" \
    --pid-file="$work/munge/munged.pid" --seed-file="$work/munge/munged.seed" \
    --log-file="$work/log/munged.log" 2>>"$work/log/munged.log" &
  daemon_pids+=($!)
  wait_for "munged" test -S "$work/munge/munge.socket"
}

write_slurm_conf() {
  local node=$1 ctld_port=$2 slurmd_port=$3
  : >"$work/plugstack.conf"  # not the system's /etc/slurm/plugstack.conf
  cat >"$work/slurm.conf" <<EOF
ClusterName=nodeaudit-test
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge/munge.socket
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
PlugStackConfig=$work/plugstack.conf
# Two runs of this test at once: srun's pmix plug-in names its dirs under TmpFS by job id, and
# every new cluster starts at job 1, so each run gets its own TmpFS and a random first job id.
TmpFS=$work/tmp
FirstJobId=$((1000 + RANDOM % 30000 * 100))
# No cgroups in a container: track job processes through /proc, bind nothing.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
# The node as configured, even where the machine shows more CPUs than 2.
SlurmdParameters=config_overrides
NodeName=$node NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=check Nodes=$node Default=YES MaxTime=5 State=UP
EOF
}

start_slurm() {
  local node
  node=$(hostname -s)
  mkdir -p "$work/state" "$work/spool" "$work/tmp"
  local ctld_port
  ctld_port=$(free_port)
  write_slurm_conf "$node" "$ctld_port" "$(free_port "$ctld_port")"
  export SLURM_CONF=$work/slurm.conf
  slurmctld -D -c -i -f "$SLURM_CONF" >>"$work/log/slurmctld.log" 2>&1 &
  daemon_pids+=($!)
  slurmd -D -f "$SLURM_CONF" -N "$node" >>"$work/log/slurmd.log" 2>&1 &
  daemon_pids+=($!)
  wait_for "node $node idle" node_idle "$node"
}

node_idle() { sinfo -h -n "$1" -o %t 2>/dev/null | grep -qx idle; }

# Polls `$@` for up to 30 s; a daemon that died or never got ready means "cannot run here": skip.
wait_for() {
  local what=$1
  shift
  for _ in $(seq 150); do
    "$@" && return 0
    local pid
    for pid in "${daemon_pids[@]}"; do
      kill -0 "$pid" 2>/dev/null || { show_logs; skip "a daemon exited before $what (logs above)"; }
    done
    sleep 0.2
  done
  show_logs
  skip "$what not reached in 30 s (logs above)"
}

# The command lines comm/README.md shows, run literally: `nodeaudit` is found on PATH.
# --repetitions 1: on a shared 2-core machine (load 15 seen) the quick level's 5 repetitions of the
# 8 B..4 MiB sweep took 26-60+ s; the test is about the launch path, not the figures.
srun_line="srun --mpi=pmix -n 2 nodeaudit run --only comm.host-fabric --repetitions 1 --out results/"
sbatch_lines=(
  "#!/bin/bash"
  "#SBATCH --nodes=1 --ntasks-per-node=2 --time=00:05:00"
  "mkdir -p results"
  "mpirun nodeaudit probe comm.host-fabric --max-size 64KiB --out results/"
)

# A README that drifted from what runs here fails the test, so the documented lines stay tested.
check_readme_has_lines() {
  local line
  for line in "$srun_line" "${sbatch_lines[@]:1}"; do
    grep -qF -- "$line" "$readme" || fail "comm/README.md lacks the tested line: $line"
  done
}

# One result file in DIR: comm.host-fabric ok over 2 ranks, the multinode block naming this host.
check_result() {
  local dir=$1 node
  node=$(hostname -s)
  local files=("$dir"/*.json)
  [[ ${#files[@]} -eq 1 && -f ${files[0]} ]] || fail "expected one result file in $dir, found: ${files[*]}"
  python3 - "${files[0]}" "$node" <<'PY' || fail "result ${files[0]} is wrong (above)"
import json, sys
doc, node = json.load(open(sys.argv[1])), sys.argv[2]
probe = doc["probes"][0] if len(doc["probes"]) == 1 else sys.exit(f"probes: {[p['id'] for p in doc['probes']]}")
problems = [what for what, ok in [
    ("probe id comm.host-fabric", probe["id"] == "comm.host-fabric"),
    ("status ok", probe["status"] == "ok"),
    ("info.ranks 2", probe.get("info", {}).get("ranks") == 2),
    ("multinode.ranks 2", doc.get("multinode", {}).get("ranks") == 2),
    (f"multinode.hosts [{node}]", doc.get("multinode", {}).get("hosts") == [node]),
    ("ranks 0 and 1 placed", sorted(p["rank"] for p in doc.get("multinode", {}).get("placement", [])) == [0, 1]),
    ("pingpong_bw measured", any(m["name"] == "pingpong_bw" for m in probe.get("metrics", []))),
    ("finished_at set", doc.get("finished_at") is not None),
] if not ok]
if problems:
    print(json.dumps({k: doc.get(k) for k in ("multinode", "finished_at")}, indent=1))
    print(json.dumps({k: probe.get(k) for k in ("id", "status", "reason", "info")}, indent=1)[:3000])
    sys.exit("missing: " + ", ".join(problems))
print(f"  {sys.argv[1].rsplit('/', 3)[-3]}: comm.host-fabric ok, ranks 2 on {doc['multinode']['hosts']}, "
      f"{len(probe['metrics'])} metrics")
PY
}

# The same line without `--mpi=pmix` (the cluster's MpiDefault is none): the two tasks have no MPI
# rank, so each would start a job of its own. Refused: exit 2, one line from task 0, no file.
run_srun_without_pmi() {
  local line=${srun_line/--mpi=pmix /}
  mkdir -p "$work/nopmi/results"
  echo "ran: $line"
  local -a cmd
  read -r -a cmd <<<"$line"
  (cd "$work/nopmi" && exec timeout 60 "${cmd[@]}" >"$work/log/nopmi.log" 2>&1) &
  local rc=0
  wait $! || rc=$?
  local said
  said=$(grep -c '^nodeaudit: ' "$work/log/nopmi.log" || true)
  ((rc == 2)) || { cat "$work/log/nopmi.log"; fail "srun without --mpi exited with $rc, not 2 (output above)"; }
  [[ $said -eq 1 ]] && grep -q "^nodeaudit: run under srun: srun started 2 tasks without MPI rank variables.*(Slurm task 0 on " \
    "$work/log/nopmi.log" || { cat "$work/log/nopmi.log"; fail "expected one refusal line from task 0 (output above)"; }
  [[ -z $(ls -A "$work/nopmi/results") ]] || fail "the refused run left files: $(ls "$work/nopmi/results")"
  echo "  refused, exit 2: $(grep '^nodeaudit: ' "$work/log/nopmi.log" | cut -c1-120)..."
}

run_srun_line() {
  mkdir -p "$work/srun/results"
  echo "ran: $srun_line"
  local started_s=$SECONDS
  # read -a: the line is split as the shell in the README would (no quotes in it).
  local -a cmd
  read -r -a cmd <<<"$srun_line"
  # In the background and waited for, so that a TERM (ctest, Ctrl-C) reaches the trap at once.
  (cd "$work/srun" && exec timeout 90 "${cmd[@]}" >"$work/log/srun.log" 2>&1) &
  local rc=0
  wait $! || rc=$?
  ((rc == 0)) || { tail -n 20 "$work/log/srun.log"; fail "srun exited with $rc (output above)"; }
  echo "  srun: exit 0 after $((SECONDS - started_s)) s"
  check_result "$work/srun/results"
}

# sbatch --wait sleeps longer and longer between its polls (a 10 s job returned after 42 s here),
# so the job's end is polled here, every 0.5 s for up to 60 s.
wait_for_job() {
  local job=$1 state=""
  for _ in $(seq 120); do
    state=$(scontrol show job -o "$job" 2>/dev/null | grep -o 'JobState=[A-Z_]*' || true)
    case $state in
      JobState=PENDING | JobState=CONFIGURING | JobState=RUNNING | JobState=COMPLETING | "") sleep 0.5 ;;
      *) break ;;
    esac
  done
  scontrol show job -o "$job" | grep -o 'JobState=[A-Z_]* .*ExitCode=[0-9:]*' | sed 's/ .* / /'
}

run_sbatch_script() {
  mkdir -p "$work/sbatch"
  printf '%s\n' "${sbatch_lines[@]}" >"$work/sbatch/comm.sbatch"
  echo "ran: sbatch comm.sbatch, comm.sbatch being:"
  sed 's/^/    /' "$work/sbatch/comm.sbatch"
  local job end started_s=$SECONDS
  job=$(cd "$work/sbatch" && sbatch --parsable --output=job.log comm.sbatch) || fail "sbatch refused the script"
  end=$(wait_for_job "$job") || true
  [[ $end == "JobState=COMPLETED ExitCode=0:0" ]] ||
    { tail -n 20 "$work/sbatch/job.log"; fail "job $job ended $end (its output above)"; }
  echo "  job $job: $end after $((SECONDS - started_s)) s"
  check_result "$work/sbatch/results"
}

main() {
  check_prerequisites
  # An outer Slurm job's variables would point srun at that job instead of the cluster made here.
  local var
  for var in $(compgen -e | grep '^SLURM_' || true); do unset "$var"; done
  work=$(mktemp -d /tmp/nodeaudit-slurm.XXXXXX)
  chmod 755 "$work"
  mkdir -p "$work/log" "$work/bin"
  ln -s "$(realpath "$nodeaudit")" "$work/bin/nodeaudit"
  export PATH=$work/bin:$PATH
  # mpirun refuses root without these; slurmd runs this test's jobs as root.
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  check_readme_has_lines
  start_munge
  start_slurm
  echo "slurm up after $SECONDS s: $(sinfo -h -o '%N %t %c CPUs, partition %P'), $(srun --version)"
  run_srun_line
  run_srun_without_pmi
  run_sbatch_script
  echo "PASS in $SECONDS s"
}

main "$@"
