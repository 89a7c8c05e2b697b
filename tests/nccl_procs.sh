#!/bin/sh
# nccl_procs.sh - train_gpt in NCCL mode as 4 real processes, on the host
# emulation (emu/mock) with the emulated NCCL (emu/nccl.h):
# its send, receive and all-reduce cross process boundaries over loopback TCP.
#   - mpirun -np 4 --oversubscribe (Open MPI) with the NCCL_COMM_ID bootstrap
#     (every built-in schedule, ./ppsched --list, with PP_EMU_NCCL_RENDEZVOUS=1:
#     a send completes only when its receive is posted, the worst case of
#     NCCL's "may block" that pp_sched_check_deadlock assumes), and a build
#     with -DPP_CUDA_MPI (the id broadcast with MPI_Bcast; v-half and
#     dualpipe; buffered sends, the emulation's default):
#     5 steps give the losses of the one-process run: bitwise, except
#     dualpipe, whose two model copies' gradients are summed in another order
#     (the gradient all-reduce; tolerance 1e-5 x |loss|);
#   - a rank that fails before a step or during one, by an error or by dying
#     (PP_EMU_NCCL_FAIL_RANK/_AT/_MODE), or that hangs: the other ranks exit 1
#     with a message naming it (a hung rank too, however the waiters' clocks
#     fire; it stays hung until they have ended), within a bound derived from
#     a measured run of the same 4 ranks without a failure (each process runs
#     under `timeout`; a rank still waiting there is a failed check). These
#     start the 4 processes from this script with torchrun's variables (RANK,
#     WORLD_SIZE), since mpirun would kill the others itself;
#   - a rank killed, failing or hanging during a step under `mpirun -np 4`:
#     the job ends non-zero within a bound derived from a clean job, every
#     message that came out names the rank, the rank mpirun names is that
#     rank or a survivor whose message names it, and nothing is left running.
# First tests/test_nccl_emu.cpp checks the emulated NCCL alone (3 processes).
# Usage: sh tests/nccl_procs.sh [TRAIN_GPT [EMU_TRAIN_GPT]]   (run by
# tests/run_tests.sh, which passes the train_gpt it built on the host
# emulation and the one built on the CUDA emulator, emu/gpu, whose real
# kernels then run as 4 processes too; and by make test-nccl; CXX and
# CFLAGS_EXTRA honoured). Prints one line per group; exits non-zero
# when one fails. Without mpirun the mpirun groups print a skip line.
here=$(cd "$(dirname "$0")" && pwd)
root="$here/.."
CXX=${CXX:-c++}
out=$(mktemp -d "${TMPDIR:-/tmp}/pp_nccl_procs.XXXXXX") || exit 1
trap 'rm -rf "$out"' EXIT INT TERM
passed=0
failed=0
data="$root/data/pipeline.txt"
model0="-d 4 -n 8 --channels 16 --seq 16 --batch 1 --heads 2 --data $data" # (an option is given once)
model="$model0 --steps 5"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
unset NCCL_COMM_ID PP_EMU_NCCL_FAIL_RANK PP_EMU_NCCL_FAIL_AT PP_EMU_NCCL_FAIL_MODE PP_EMU_NCCL_TIMEOUT \
    RANK WORLD_SIZE LOCAL_RANK OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE PMI_RANK PMI_SIZE SLURM_PROCID SLURM_NTASKS

group() { # group NAME COMMAND...: the command's last line goes after the name
    name=$1
    shift
    if "$@" >"$out/log" 2>&1; then
        echo "[ok] $name: $(tail -n 1 "$out/log")"
        passed=$((passed + 1))
    else
        echo "[FAIL] $name"
        sed 's/^/    /' "$out/log" | tail -n 40
        failed=$((failed + 1))
    fi
}

# a free loopback port for NCCL_COMM_ID (the kernel's choice where python3 is there)
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null ||
        echo $((20000 + $$ % 20000))
}

# the flags come from the Makefile (make test and make test-nccl pass them;
# run by hand, make test-env gives those the environment does not set)
if [ -z "${MOCK_CXXFLAGS+set}" ] || [ -z "${CXX+set}" ]; then
    vars=$(cd "$root" && env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s --no-print-directory test-env) ||
        { echo "nccl_procs: make test-env (the flags) failed" >&2; exit 1; }
    eval "$vars"
fi
mock="$CXX $MOCK_CXXFLAGS $CFLAGS_EXTRA -DPP_CUDA_HOST_EMULATION -I$root/emu/mock -x c++"
build() {
    if [ -n "$1" ]; then
        cp "$1" "$out/train_gpt" || return 1
    else
        $mock -c "$root/pp_cuda.cu" -o "$out/pp_cuda.o" &&
            $mock "$root/examples/train_gpt.cu" -x none "$out/pp_cuda.o" -o "$out/train_gpt" || return 1
    fi
    if command -v mpicc >/dev/null 2>&1; then
        $mock -DPP_CUDA_MPI $(mpicc --showme:compile) -c "$root/pp_cuda.cu" -o "$out/pp_cuda_mpi.o" &&
            $mock "$root/examples/train_gpt.cu" -x none "$out/pp_cuda_mpi.o" -o "$out/train_gpt_mpi" \
                $(mpicc --showme:link) || return 1
        echo "train_gpt, and train_gpt built with -DPP_CUDA_MPI (mpicc's flags)"
    else
        echo "train_gpt (no mpicc: no MPI build)"
    fi
}

# equal LAUNCH SCHEDULE...: each schedule's 5 losses from 4 processes against one process
equal() {
    how=$1
    last=
    rel=none
    shift
    for s in "$@"; do
        "$out/train_gpt" -s "$s" $model --loss-log "$out/one_$s.txt" >"$out/one_$s.out" || return 1
        rm -f "$out/four_$s.txt"
        if [ "$how" = comm_id ]; then
            NCCL_COMM_ID=127.0.0.1:$(free_port) PP_EMU_NCCL_RENDEZVOUS=1 PP_EMU_NCCL_TIMEOUT=60 \
                timeout 120 mpirun --oversubscribe -np 4 -x NCCL_COMM_ID -x PP_EMU_NCCL_RENDEZVOUS -x PP_EMU_NCCL_TIMEOUT \
                "$out/train_gpt" -s "$s" $model --loss-log "$out/four_$s.txt" >"$out/four_$s.out" 2>&1
        else # (make asan: Open MPI's own libraries leak at exit; LeakSanitizer looks away there)
            ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
                timeout 120 mpirun --oversubscribe -np 4 -x ASAN_OPTIONS "$out/train_gpt_mpi" -s "$s" $model \
                --loss-log "$out/four_$s.txt" >"$out/four_$s.out" 2>&1
        fi
        rc=$?
        [ $rc -eq 0 ] || { echo "$s: mpirun exited $rc"; cat "$out/four_$s.out"; return 1; }
        # NCCL mode, and every rank ran its device
        grep -q 'NCCL, one rank per device' "$out/four_$s.out" || { echo "$s: not in NCCL mode"; cat "$out/four_$s.out"; return 1; }
        [ "$(grep -cE '^rank +[0-3] ' "$out/four_$s.out")" -eq 4 ] || { echo "$s: not 4 ranks"; cat "$out/four_$s.out"; return 1; }
        [ "$(wc -l <"$out/four_$s.txt")" -eq 5 ] || { echo "$s: 5 losses expected"; cat "$out/four_$s.txt"; return 1; }
        case $s in
        dualpipe*) # the two copies' gradients: one array on one process, an all-reduce over ranks
            rel=$(awk 'NR == FNR { a[$1] = $2; next }
                 { d = $2 - a[$1]; if (d < 0) d = -d; r = d / (a[$1] < 0 ? -a[$1] : a[$1]); if (r > m) m = r;
                   if (d > 1e-5 * (a[$1] < 0 ? -a[$1] : a[$1])) bad = 1 }
                 END { printf "%.2g", m; exit bad }' "$out/one_$s.txt" "$out/four_$s.txt") ||
                { paste "$out/one_$s.txt" "$out/four_$s.txt"; return 1; } ;;
        *)
            cmp "$out/one_$s.txt" "$out/four_$s.txt" || { paste "$out/one_$s.txt" "$out/four_$s.txt"; return 1; } ;;
        esac
        case $s in v-half | interleaved-1f1b | dualpipe) last="$last $s $(tail -n 1 "$out/four_$s.txt" | cut -d' ' -f2)" ;; esac
    done
    echo "$# schedules, final losses$last (dualpipe within 1e-5 relative, largest $rel; the others bitwise)"
}

# ranks FAIL_ENV...: starts ranks 0..3 of v-half (4 steps) with torchrun's
# variables, each under `timeout $limit`; rank r's exit code goes to rc_r,
# its stderr to err_r, its seconds to t_r. With hung=R, rank R also gets
# PP_EMU_NCCL_TIMEOUT=$limit (a hang lasts that long) and is stopped once
# every other rank has ended: an order, not a race between clocks.
limit=30
ranks() {
    port=$(free_port)
    t0=$(date +%s)
    others=
    for r in 0 1 2 3; do
        extra=
        [ "$r" = "${hung:-}" ] && extra="PP_EMU_NCCL_TIMEOUT=$limit"
        (
            env "$@" $extra NCCL_COMM_ID=127.0.0.1:$port RANK=$r WORLD_SIZE=4 LOCAL_RANK=$r \
                timeout $limit "$out/train_gpt" -s v-half $model0 --steps 4 >"$out/out_$r" 2>"$out/err_$r" &
            echo $! >"$out/pid_$r"
            wait $!
            echo $? >"$out/rc_$r"
            echo $(($(date +%s) - t0)) >"$out/t_$r"
        ) &
        [ "$r" = "${hung:-}" ] || others="$others $!"
    done
    if [ -n "${hung:-}" ]; then
        wait $others
        kill "$(cat "$out/pid_$hung")" 2>/dev/null
    fi
    wait
}

# failed BAD RC_BAD MAX_S WORD...: rank BAD exited RC_BAD (any non-zero: x);
# every other rank exited 1 within MAX_S seconds and its message has the words
failed() {
    bad=$1 want=$2 max=$3
    shift 3
    for r in 0 1 2 3; do
        rc=$(cat "$out/rc_$r") t=$(cat "$out/t_$r")
        echo "rank $r: exit $rc after ${t} s: $(cat "$out/err_$r")"
        if [ $r -eq "$bad" ]; then
            if [ "$want" = x ]; then [ "$rc" -ne 0 ] || return 1; else [ "$rc" -eq "$want" ] || return 1; fi
            continue
        fi
        [ "$rc" -eq 1 ] && [ "$t" -le "$max" ] || return 1
        for w in "$@"; do grep -q "$w" "$out/err_$r" || { echo "rank $r does not say: $w"; return 1; }; done
    done
    r=$(((bad + 1) % 4))
    echo "the others exited 1 within ${max} s; rank $r said: $(sed 's/.*NCCL failed while this rank waited for its stream: //; s/ at [^ ]*:[0-9]*$//' "$out/err_$r")"
}

group "the emulated NCCL alone, 3 forked processes (tests/test_nccl_emu.cpp: grouped ring, pairing order, rank-order sum, errors, abort)" \
    sh -c "$mock '$here/test_nccl_emu.cpp' -o '$out/test_nccl_emu' && '$out/test_nccl_emu'"

group "build train_gpt on the host emulation with the emulated NCCL" build "$1" || {
    echo "nccl_procs: $passed passed, $failed failed"
    exit 1
}

# the real kernels on the CUDA emulator: 4 processes = one process, bit for
# bit (same kernels, same order), at a size the emulator runs in seconds;
# exit 0 also says its checkers found nothing
emu_equal() {
    m="-s 1f1b -d 4 -n 4 --steps 2 --layers-per-stage 1 --channels 16 --seq 16 --batch 1 --heads 2 --data $data"
    "$1" $m --loss-log "$out/emu_one.txt" >"$out/emu_one.out" 2>&1 || { cat "$out/emu_one.out"; return 1; }
    NCCL_COMM_ID=127.0.0.1:$(free_port) PP_EMU_NCCL_RENDEZVOUS=1 timeout 300 mpirun --oversubscribe -np 4 \
        -x NCCL_COMM_ID -x PP_EMU_NCCL_RENDEZVOUS "$1" $m --loss-log "$out/emu_four.txt" >"$out/emu_four.out" 2>&1 ||
        { cat "$out/emu_four.out"; return 1; }
    grep -q 'NCCL, one rank per device' "$out/emu_four.out" && cmp "$out/emu_one.txt" "$out/emu_four.txt" ||
        { cat "$out/emu_four.out"; paste "$out/emu_one.txt" "$out/emu_four.txt"; return 1; }
    echo "losses $(cut -d' ' -f2 "$out/emu_four.txt" | tr '\n' ' ')bit for bit; no checker finding in any process"
}

# every built-in schedule (make builds ./ppsched; these three where it is missing)
schedules=$("$root/ppsched" --list 2>/dev/null | awk '{ print $1 }')
[ -n "$schedules" ] || schedules="v-half interleaved-1f1b dualpipe"
if command -v mpirun >/dev/null 2>&1; then
    group "mpirun -np 4, NCCL_COMM_ID bootstrap, rendezvous sends: every built-in schedule's losses = one process" \
        equal comm_id $schedules
    if [ -x "$out/train_gpt_mpi" ]; then
        group "mpirun -np 4, built with MPI (MPI_Bcast of the id, no NCCL_COMM_ID), buffered sends: v-half, dualpipe losses = one process" \
            equal mpi v-half dualpipe
    fi
    if [ -n "$2" ]; then
        group "the real kernels on the CUDA emulator (emu/gpu): train_gpt 1f1b d=4 n=4 under mpirun -np 4 = one process" \
            emu_equal "$2"
    fi
    group "mpirun -np 4, train_gpt --profile: the pass-time all-reduce, then a second communicator at the same NCCL_COMM_ID" sh -c "
        NCCL_COMM_ID=127.0.0.1:$(free_port) timeout 120 mpirun --oversubscribe -np 4 -x NCCL_COMM_ID '$out/train_gpt' -s 1f1b \
            $model0 --steps 3 --profile-steps 2 --profile --mem-limit 2 >'$out/prof.out' 2>&1 || { cat '$out/prof.out'; exit 1; }
        grep 're-planned: v-auto' '$out/prof.out' && [ \$(grep -cE '^rank +[0-3] ' '$out/prof.out') -eq 8 ]"
    group "mpirun -np 4 without NCCL_COMM_ID or MPI: every rank exits 1 saying what to set" sh -c "
        timeout 60 mpirun --oversubscribe -np 4 '$out/train_gpt' -s v-half $model >'$out/noid.out' 2>&1; rc=\$?
        [ \$rc -ne 0 ] && [ \$rc -ne 124 ] && grep -q 'set NCCL_COMM_ID=host:port' '$out/noid.out' &&
        echo \"mpirun exited \$rc: \$(grep -m1 -o 'rank [0-9] of 4.*NCCL_COMM_ID=host:port' '$out/noid.out')\""
else
    echo "[skip] train_gpt under mpirun: no mpirun here (Debian: apt-get install openmpi-bin libopenmpi-dev; .ci/run installs them)"
fi

# The bounds below come from this machine: the same 4 ranks without a
# failure take base seconds; a failing run may take 3 x that, plus twice the
# emulated NCCL's timeout (tmo, where a test relies on it) and 4 s. Where the
# machine is 10x slower, so are the bounds.
clean() {
    ranks || return 1
    for r in 0 1 2 3; do
        [ "$(cat "$out/rc_$r")" -eq 0 ] || { echo "rank $r: exit $(cat "$out/rc_$r")"; cat "$out/err_$r"; return 1; }
    done
    base=$(($(cat "$out/t_0" "$out/t_1" "$out/t_2" "$out/t_3" | sort -n | tail -n 1) + 1))
    echo "$base s (rounded up), so a failing run is given $((3 * base + 2 * tmo + 4)) s, each process $((10 * base + 30)) s"
}
base=10
tmo=3
group "4 ranks without a failure: every rank exits 0 (their time is the baseline of the bounds below)" clean
[ "$base" -gt 3 ] && tmo=$base
limit=$((10 * base + 30))
bound=$((3 * base + 2 * tmo + 4))

# PP_EMU_NCCL_TIMEOUT stays at its default (300 s) where a failure must be
# seen by its closed connection or its abort message, not by the timeout
ranks_init() { ranks PP_EMU_NCCL_FAIL_RANK=3 PP_EMU_NCCL_FAIL_AT=init PP_EMU_NCCL_TIMEOUT=$tmo && failed 3 1 $bound 'missing: rank 3'; }
group "a rank that fails before a step (rank 3's ncclCommInitRank; the bootstrap waits PP_EMU_NCCL_TIMEOUT=$tmo s)" ranks_init

ranks_kill0() { ranks PP_EMU_NCCL_FAIL_RANK=2 PP_EMU_NCCL_FAIL_AT=1 PP_EMU_NCCL_FAIL_MODE=kill && failed 2 x $bound 'rank 2 closed its connection'; }
group "a rank that dies before a step (rank 2 SIGKILLed at its first NCCL op, pp_cuda_create's all-reduce)" ranks_kill0

# rank 1 runs 65 NCCL ops a step (64 sends and receives, the loss all-reduce) after 1 in create: op 96 is in step 1
during() { grep -q '^step     0' "$out/out_0" && ! grep -q '^step     3' "$out/out_0"; }
ranks_err() { ranks PP_EMU_NCCL_FAIL_RANK=1 PP_EMU_NCCL_FAIL_AT=96 && during && failed 1 1 $bound 'injected failure' 'rank 1'; }
group "a rank whose NCCL op fails during step 1 (rank 1, op 96; it aborts the communicator)" ranks_err

ranks_kill() { ranks PP_EMU_NCCL_FAIL_RANK=3 PP_EMU_NCCL_FAIL_AT=60 PP_EMU_NCCL_FAIL_MODE=kill && during && failed 3 x $bound 'rank 3 closed its connection'; }
group "a rank that dies during step 1 (rank 3 SIGKILLed at op 60)" ranks_kill

# Every other rank must time out (or take a peer's timeout abort) and exit 1
# in bounded time, naming rank 3. Each waits on its own peer with its own
# clock, and on a loaded machine a rank waiting on a waiter may time out
# first: the "waiting on" notices (emu/nccl.h) let it follow the
# chain of waits to rank 3, and its abort carries rank 3 to the others.
# Rank 3 stays hung until they have all ended (hung=3; it is stopped then).
ranks_hang() {
    hung=3 ranks PP_EMU_NCCL_FAIL_RANK=3 PP_EMU_NCCL_FAIL_AT=60 PP_EMU_NCCL_FAIL_MODE=hang PP_EMU_NCCL_TIMEOUT=$tmo && during &&
        failed 3 x $bound 'PP_EMU_NCCL_TIMEOUT' 'rank(s) 3, which neither answered nor left'
}
group "a rank that hangs during step 1 (rank 3 stops at op 60, connections open, until the others end; they wait PP_EMU_NCCL_TIMEOUT=$tmo s)" ranks_hang

# The same failures under the real launcher, `mpirun -np 4`: Open MPI ends
# the job itself when a process ends non-zero or by a signal, killing the
# others (SIGTERM), and prints which process it was; a survivor may print
# its own message first, or be killed before it can. Each job runs under
# setsid, so that every process it starts carries its sid (ps -o sid): after
# mpirun returns, no process with that sid may still run (zombies waiting
# for their reaper aside), nor any copy of this run's train_gpt.
# The bound comes from a clean job under mpirun, measured here as above.
# mpi FILE ARGS...: `timeout $limit mpirun --oversubscribe ARGS`, its output
# in $out/FILE; sets mpi_rc, mpi_t (seconds) and mpi_left (what still runs)
mpi() {
    f=$1
    shift
    t0=$(date +%s)
    if command -v setsid >/dev/null 2>&1; then
        setsid -w sh -c 'echo $$ >"$0.sid"; exec timeout '$limit' mpirun --oversubscribe "$@"' "$out/$f" "$@" >"$out/$f" 2>&1
    else
        echo none >"$out/$f.sid"
        timeout $limit mpirun --oversubscribe "$@" >"$out/$f" 2>&1
    fi
    mpi_rc=$?
    mpi_t=$(($(date +%s) - t0))
    mpi_left=$(ps -eo sid=,stat=,pid=,args= | awk -v s="$(cat "$out/$f.sid")" -v bin="$out/train_gpt" \
        '$2 !~ /^Z/ && ($1 == s || index($0, bin)) && !index($0, "awk")')
}
mpi_clean() {
    NCCL_COMM_ID=127.0.0.1:$(free_port) mpi mpi_clean.out -np 4 -x NCCL_COMM_ID "$out/train_gpt" -s v-half $model0 --steps 4
    [ $mpi_rc -eq 0 ] && [ -z "$mpi_left" ] || { echo "mpirun exited $mpi_rc; still running: $mpi_left"; cat "$out/mpi_clean.out"; return 1; }
    mbase=$((mpi_t + 1))
    echo "$mbase s (rounded up), so a failing job is given $((3 * mbase + 2 * tmo + 4)) s"
}
# mpi_failed FILE BAD AT WORD...: the job in FILE failed where planted (the
# failing rank's own line has AT: an op that the torchrun groups above show
# to be in step 1; rank 0 may be killed before it prints its steps, so they
# are not asked for), ended non-zero (not by the timeout) within mbound
# seconds and left nothing running; every rank's message that came out
# (train_gpt: rank R: ...) has the words. mpirun names one process: the
# first whose end it noticed, which is the failing rank or a survivor that
# saw the failure and exited first; a survivor it names must have said the
# words itself, so that mpirun's message leads to rank BAD either way.
mpi_failed() {
    f=$1 bad=$2 at=$3
    shift 3
    echo "mpirun exited $mpi_rc after $mpi_t s"
    sed 's/^/    /' "$out/$f"
    grep -q "$at" "$out/$f" && ! grep -q '^step     3' "$out/$f" || { echo "rank $bad did not fail at: $at"; return 1; }
    [ $mpi_rc -ne 0 ] && [ $mpi_rc -ne 124 ] && [ $mpi_t -le $mbound ] ||
        { echo "expected a non-zero exit within $mbound s"; return 1; }
    [ -z "$mpi_left" ] || {
        echo "still running after mpirun ended: $mpi_left"
        kill $(echo "$mpi_left" | awk '{ print $3 }') 2>/dev/null # (this run's own processes, by pid)
        return 1
    }
    grep '^train_gpt: rank [0-9]' "$out/$f" >"$out/$f.said"
    while read -r line; do
        for w in "$@"; do
            case $line in *"$w"*) ;; *) echo "a rank does not say '$w': $line"; return 1 ;; esac
        done
    done <"$out/$f.said"
    # Open MPI 4 and 5 word these alike: "process rank R with PID P on node N
    # exited on signal S", or "The first process to do so was: Process name:
    # [job,R] Exit code: C" (Open MPI 4 writes the job as [J,1])
    says=$(tr '\n' ' ' <"$out/$f" | grep -oE 'process rank [0-9]+ with PID [0-9]+ on node [^ ]+ exited on signal [0-9]+|The first process to do so was: +Process name: +\[[^ ]*,[0-9]+\] +Exit code: +[0-9]+' |
        head -n 1 | tr -s ' ')
    named=$(echo "$says" | sed -E 's/^process rank ([0-9]+) .*/\1/; s/.*,([0-9]+)\] Exit.*/\1/')
    case $named in [0-3]) ;; *) echo "mpirun names no process"; return 1 ;; esac
    if [ "$named" != "$bad" ]; then
        grep -q "^train_gpt: rank $named: " "$out/$f.said" || { echo "mpirun names rank $named, which said nothing"; return 1; }
        how="rank $named, whose message names rank $bad"
    else
        how="rank $bad itself"
    fi
    echo "exit $mpi_rc after $mpi_t s (bound $mbound), nothing left running, $(wc -l <"$out/$f.said") rank message(s), each naming rank $bad; mpirun names $how: $says"
}
if command -v mpirun >/dev/null 2>&1; then
    mbase=10
    group "mpirun -np 4 without a failure: exit 0, nothing left running (its time is the baseline of the mpirun bounds below)" mpi_clean
    mbound=$((3 * mbase + 2 * tmo + 4))
    fail_x="-x PP_EMU_NCCL_FAIL_RANK -x PP_EMU_NCCL_FAIL_AT -x PP_EMU_NCCL_FAIL_MODE -x PP_EMU_NCCL_TIMEOUT"
    mpi_kill() {
        NCCL_COMM_ID=127.0.0.1:$(free_port) PP_EMU_NCCL_FAIL_RANK=3 PP_EMU_NCCL_FAIL_AT=60 PP_EMU_NCCL_FAIL_MODE=kill \
            PP_EMU_NCCL_TIMEOUT=300 mpi mpi_kill.out -np 4 -x NCCL_COMM_ID $fail_x "$out/train_gpt" -s v-half $model0 --steps 4
        mpi_failed mpi_kill.out 3 'rank 3 kills itself at op 60' 'rank 3 closed its connection'
    }
    group "mpirun -np 4, a rank killed during step 1 (rank 3 SIGKILLed at op 60): mpirun ends the job, its message leads to rank 3" mpi_kill
    mpi_err() {
        NCCL_COMM_ID=127.0.0.1:$(free_port) PP_EMU_NCCL_FAIL_RANK=1 PP_EMU_NCCL_FAIL_AT=96 PP_EMU_NCCL_FAIL_MODE= \
            PP_EMU_NCCL_TIMEOUT=300 mpi mpi_err.out -np 4 -x NCCL_COMM_ID $fail_x "$out/train_gpt" -s v-half $model0 --steps 4
        mpi_failed mpi_err.out 1 'rank 1: injected failure of its NCCL op 96' 'rank 1: injected failure of its NCCL op 96'
    }
    group "mpirun -np 4, a rank whose NCCL op fails during step 1 (rank 1, op 96): mpirun ends the job, its message leads to rank 1" mpi_err
    # rank 3 hangs far longer than the job's timeout (an MPMD job gives it
    # its own PP_EMU_NCCL_TIMEOUT); the others wait tmo s and exit 1, and
    # mpirun kills rank 3 when the first of them has ended
    mpi_hang() {
        NCCL_COMM_ID=127.0.0.1:$(free_port) PP_EMU_NCCL_FAIL_RANK=3 PP_EMU_NCCL_FAIL_AT=60 PP_EMU_NCCL_FAIL_MODE=hang \
            PP_EMU_NCCL_TIMEOUT=$tmo mpi mpi_hang.out -x NCCL_COMM_ID $fail_x \
            -np 3 "$out/train_gpt" -s v-half $model0 --steps 4 : -np 1 env PP_EMU_NCCL_TIMEOUT=$limit "$out/train_gpt" -s v-half $model0 --steps 4
        mpi_failed mpi_hang.out 3 'rank 3 stops at op 60' 'PP_EMU_NCCL_TIMEOUT' 'rank(s) 3, which neither answered nor left'
    }
    group "mpirun -np 4, a rank that hangs during step 1 (rank 3 at op 60; the others wait PP_EMU_NCCL_TIMEOUT=$tmo s): mpirun ends the job and kills it" mpi_hang
else
    echo "[skip] a rank killed, failing or hanging under mpirun: no mpirun here"
fi

echo "nccl_procs: $passed passed, $failed failed"
[ $failed -eq 0 ]
