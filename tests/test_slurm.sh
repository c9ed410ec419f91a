#!/usr/bin/env bash
# A sweep as a Slurm job array on a REAL one-node Slurm (munged, slurmctld, slurmd started here, stopped by
# pid on any exit): a 4-task array; one task cancelled mid-way (scancel) and one task's qrnn killed with
# SIGKILL (its task restarts it); sweep-status sees the cancelled task interrupted; the same command
# resubmitted runs only the cancelled task's missing runs and a dependent job merges; the merged file has
# every run of the sweep exactly once, and the runs finished before the cancel were not run again. A second
# submission while tasks are live is refused.
# Exit 77 (CTest: skipped) with a message where Slurm cannot be installed.
set -euo pipefail
QRNN=${QRNN_CLI:?set QRNN_CLI to the qrnn binary}
PY=/usr/bin/python3
export SLURM_DIR=$(mktemp -d /tmp/qrnn_slurm_test.XXXXXX)
source "$(dirname "$0")/support/slurm_cluster.sh"

finish() {
    local rc=$?
    slurm_cluster_stop
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
        echo "--- FAILED (exit $rc); logs kept in $SLURM_DIR"
        tail -n 5 "$SLURM_DIR"/log/*.log "$SLURM_DIR"/work/out/sweep.slurm/logs/* 2>/dev/null || true
    else
        rm -rf "$SLURM_DIR"
    fi
    exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT TERM

if ! why=$(slurm_cluster_install); then
    echo "SKIPPED: no Slurm here: $why"
    exit 77
fi
slurm_cluster_start
echo "one-node Slurm up: SLURM_CONF=$SLURM_CONF, daemons ${SLURM_PIDS[*]}"

W=$SLURM_DIR/work
mkdir -p "$W"
# 12 runs of 1-2 s each (many timed repeats of a small layer), 3 per task.
cat >"$W/sweep.yaml" <<'EOF'
name: slurm_test
base: {input: 128, hidden: 128, warmup: 1, repeats: 5000, verify: true}
grid:
  batch: [8, 9, 10]
  seq: [32, 33, 34, 35]
EOF
OUT=$W/out/sweep.h5
runs_expected=$("$QRNN" sweep "$W/sweep.yaml" --dry-run | awk '/runs in the sweep/ {print $1}')
[ "$runs_expected" -eq 12 ] || { echo "expected 12 runs, dry run says $runs_expected"; exit 1; }

# Waits scale with QRNN_TEST_TIME_SCALE (set by tests/CMakeLists.txt: 4 in sanitizer builds, where qrnn is slower).
wait_job_gone() {  # job id, timeout seconds (before scaling)
    local i
    for i in $(seq 1 $((2 * $2 * ${QRNN_TEST_TIME_SCALE:-1}))); do
        [ -z "$(squeue -h --jobs="$1" -o %i 2>/dev/null)" ] && return 0
        sleep 0.5
    done
    echo "job $1 still in the queue after $(($2 * ${QRNN_TEST_TIME_SCALE:-1})) s:"; squeue; return 1
}
progress() {  # shard files... -> "done running" per file (runs with a final status; runs in progress)
    $PY - "$@" <<'EOF'
import sys, h5py
out = []
for path in sys.argv[1:]:
    try:
        with h5py.File(path, "r") as f:
            s = list(f["runs/status"].asstr()[:])
        out += [sum(x != "running" for x in s), s.count("running")]
    except (OSError, KeyError):
        out += [0, 0]
print(*out)
EOF
}

# 1. Submit; cancel task 0 in its second or third run; SIGKILL task 1's qrnn mid-run.
submit=$("$QRNN" sweep "$W/sweep.yaml" -o "$OUT" --slurm --tasks 4)
echo "$submit"
job=$(echo "$submit" | awk '/^submitted job/ {sub(":", "", $3); print $3; exit}')
[ -n "$job" ] || { echo "no job id in: $submit"; exit 1; }
# A second submission while the tasks are pending or running is refused (two writers of one shard).
set +e
again=$("$QRNN" sweep "$W/sweep.yaml" -o "$OUT" --slurm 2>&1)
rc=$?
set -e
[ "$rc" -eq 2 ] && echo "$again" | grep -q "job $job still has tasks 0-3 pending or running" ||
    { echo "a submission beside live tasks was not refused (exit $rc): $again"; exit 1; }
cancelled=0 killed=0
p0=$W/out/sweep.part-0-of-4.h5 p1=$W/out/sweep.part-1-of-4.h5
for i in $(seq 1 $((300 * ${QRNN_TEST_TIME_SCALE:-1}))); do
    read -r done0 running0 done1 running1 < <(progress "$p0" "$p1")
    # Cancel only inside a run (one marked running): between runs no run is interrupted, and none is retried.
    if [ "$cancelled" = 0 ] && [ "$done0" -ge 1 ] && [ "$running0" -ge 1 ]; then
        [ "$done0" -lt 3 ] || { echo "task 0 finished before the cancel"; exit 1; }
        scancel "${job}_0"
        cancelled=1
        echo "cancelled task ${job}_0 after $done0 of its 3 runs"
    fi
    if [ "$killed" = 0 ] && [ "$done1" -ge 1 ] && [ "$running1" -ge 1 ]; then
        pid=$(ps -eo pid=,args= | awk -v f="$p1" '$2 ~ /qrnn$/ && index($0, f) {print $1; exit}')
        if [ -n "$pid" ]; then
            kill -9 "$pid"
            killed=1
            echo "killed task 1's qrnn (pid $pid) with SIGKILL in its run $((done1 + 1))"
        fi
    fi
    [ "$cancelled" = 1 ] && [ "$killed" = 1 ] && break
    sleep 0.1
done
[ "$cancelled" = 1 ] && [ "$killed" = 1 ] || { echo "could not cancel/kill in time"; squeue; exit 1; }
wait_job_gone "$job" 150

# 2. Status: task 0 interrupted, the others done; --merge refuses (exit 1).
status=$("$QRNN" sweep-status "$OUT")
echo "$status"
echo "$status" | grep -Eq '^ *0 .* interrupted ' || { echo "task 0 not reported interrupted"; exit 1; }
echo "$status" | grep -q 'done: 1-3' || { echo "tasks 1-3 not reported done"; exit 1; }
set +e
"$QRNN" sweep-status "$OUT" --merge >/dev/null
rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "sweep-status --merge of an unfinished sweep: exit $rc, expected 1"; exit 1; }
before=$($PY - "$W/out/sweep.part-0-of-4.h5" <<'EOF'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    r = f["runs"]
    print(" ".join(sorted(i + "@" + t for i, s, t in zip(r["run_id"].asstr()[:], r["status"].asstr()[:],
                                                        r["finished_utc"].asstr()[:]) if s == "ok")))
EOF
)

# 3. The same command again: only task 0 is submitted; a dependent job merges when it ends.
resubmit=$("$QRNN" sweep "$W/sweep.yaml" -o "$OUT" --slurm --tasks 4 --merge-when-done)
echo "$resubmit"
echo "$resubmit" | grep -q "tasks 0 of 4" || { echo "the resubmission is not task 0 alone"; exit 1; }
job2=$(echo "$resubmit" | awk '/^submitted job/ {sub(":", "", $3); print $3; exit}')
merge_job=$(echo "$resubmit" | awk '/^submitted job/ {sub(":", "", $3); id = $3} END {print id}')
[ "$merge_job" != "$job2" ] || { echo "no merge job submitted"; exit 1; }
wait_job_gone "$job2" 150
wait_job_gone "$merge_job" 60
status=$("$QRNN" sweep-status "$OUT")
echo "$status"
echo "$status" | grep -q "^all done and merged" || { echo "sweep-status does not say the sweep is merged"; exit 1; }

# 4. The merged file: every run exactly once, all ok; task 0's earlier runs kept; the interrupted runs retried.
$PY - "$OUT" "$runs_expected" "$before" <<'EOF'
import sys, collections, h5py
path, expected, before = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
with h5py.File(path, "r") as f:
    r = {k: (v.asstr()[:] if h5py.check_string_dtype(v.dtype) else v[:]) for k, v in f["runs"].items()}
ids = collections.Counter(r["run_id"])
assert len(ids) == expected, f"{len(ids)} distinct runs, expected {expected}"
assert max(ids.values()) == 1, f"runs recorded twice: {[i for i, n in ids.items() if n > 1]}"
assert set(r["status"]) == {"ok"}, f"statuses {collections.Counter(r['status'])}"
kept = {i + "@" + t for i, t in zip(r["run_id"], r["finished_utc"])}
assert before and all(b in kept for b in before), f"task 0's finished runs were run again: {before}"
# Started twice: the run task 0 was in when cancelled, and the one task 1's qrnn was in when killed.
retried = sorted(int(i) % 4 for i, a in zip(r["index"], r["attempts"]) if a == 2)
assert retried == [0, 1], f"runs started twice, by shard: {retried}, expected one of shard 0 and one of shard 1"
assert max(r["attempts"]) == 2
print(f"merged file OK: {expected} runs, each once, all ok; {len(before)} kept across the cancel; "
      "the cancelled and the killed run each retried once")
EOF
echo "PASS"
