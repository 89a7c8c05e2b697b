#!/bin/sh
# emu/gpu/build.sh - builds pp_cuda's CUDA programs for the emulator.
# Usage: sh emu/gpu/build.sh OUT [KERNELS.cuh] [TARGETS]
#   OUT          a directory for the rewritten sources, objects and programs
#   KERNELS.cuh  the kernels to use (default pp_cuda_gpt.cuh; make mutants
#                passes a mutated copy)
#   TARGETS      any of: self kernels pipeline train bench profile (default:
#                all but bench and profile)
# Makes OUT/test_emu (the checkers on planted bugs), OUT/test_cuda_kernels,
# OUT/test_cuda_pipeline, OUT/train_gpt, OUT/bench_emu, OUT/kernel_profile. The
# translation units holding kernels are rewritten by rewrite.py (lines kept)
# and compiled by g++ with -fsanitize=thread's hooks only (no TSan runtime:
# pp_emu.cpp defines the hooks); pp_emu.cpp is compiled plainly.
# Env: EMU_CXX (g++), EMU_OPT (-O2), PYTHON (python3), EMU_DEFS (extra -D),
#      EMU_PP_CUDA (the executor to use, default pp_cuda.cu; make mutants
#      passes a mutated copy).
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
emu=$(cd "$here/.." && pwd)
out=$1
cuh=${2:-$root/pp_cuda_gpt.cuh}
targets=${3:-self kernels pipeline train}
[ -n "$out" ] || { echo "usage: build.sh OUT [KERNELS.cuh] [TARGETS]" >&2; exit 2; }
CXX=${EMU_CXX:-g++}
PY=${PYTHON:-python3}
OPT=${EMU_OPT:--O2}
mkdir -p "$out/src/tests" "$out/src/bench"
cuda=${CUDA_HOME:-/usr/local/cuda}
# emu/ for the emulated NCCL shared with the host emulation (emu/nccl.h)
inc="-I$here -I$emu -I$cuda/include -I$root -I$root/tests -I$root/ref"
# the hooks: every load and store calls __tsan_{read,write}N (pp_emu.cpp);
# -fno-tree-sra keeps a vector load or store (uint4, float2) one access of
# its width, so the alignment check sees it whole, as the GPU executes it;
# -fsanitize=bounds calls __ubsan_handle_out_of_bounds (pp_emu.cpp too) on an
# index outside an array of known size: local arrays, which have no red zones
san="-fsanitize=thread,bounds --param tsan-instrument-func-entry-exit=0 -fno-tree-sra"
flags="-std=c++17 $OPT -g -Wall -Wextra -Wno-unknown-pragmas $EMU_DEFS"
"$PY" "$here/rewrite.py" "$cuh" "$out/src/pp_cuda_gpt.cuh" \
    "$root/tests/test_cuda_kernels.cu" "$out/src/tests/test_cuda_kernels.cpp" \
    "${EMU_PP_CUDA:-$root/pp_cuda.cu}" "$out/src/pp_cuda.cpp" \
    "$root/bench/bench_emu.cu" "$out/src/bench/bench_emu.cpp" \
    "$root/tests/test_emu.cu" "$out/src/tests/test_emu.cpp" \
    "$root/bench/kernel_profile.cu" "$out/src/bench/kernel_profile.cpp"
# host code the rewritten bench sources include, beside them ("bench_dev.h")
cp "$root/bench/bench_dev.h" "$out/src/bench/"
$CXX $flags $inc -c "$here/pp_emu.cpp" -o "$out/pp_emu.o" &
emu=$!
case " $targets " in *" kernels "*)
    $CXX $flags $san -include pp_emu.h $inc -c "$out/src/tests/test_cuda_kernels.cpp" -o "$out/test_cuda_kernels.o" ;;
esac
case " $targets " in *" self "*)
    $CXX $flags $san -include pp_emu.h $inc -c "$out/src/tests/test_emu.cpp" -o "$out/test_emu.o" ;;
esac
case " $targets " in *" bench "*)
    $CXX $flags $san -include pp_emu.h $inc -c "$out/src/bench/bench_emu.cpp" -o "$out/bench_emu.o" ;;
esac
case " $targets " in *" profile "*)
    $CXX $flags $san -include pp_emu.h $inc -c "$out/src/bench/kernel_profile.cpp" -o "$out/kernel_profile.o" ;;
esac
case " $targets " in *" pipeline "*|*" train "*)
    $CXX $flags $san -include pp_emu.h $inc -c "$out/src/pp_cuda.cpp" -o "$out/pp_cuda.o" ;;
esac
wait $emu
# the programs that are one rewritten source and the emulator: TARGET:PROGRAM
for tp in kernels:test_cuda_kernels self:test_emu bench:bench_emu profile:kernel_profile; do
    case " $targets " in *" ${tp%%:*} "*)
        $CXX -o "$out/${tp#*:}" "$out/${tp#*:}.o" "$out/pp_emu.o" -ldl ;;
    esac
done
case " $targets " in *" pipeline "*)
    $CXX $flags $inc -x c++ -c "$root/tests/test_cuda_pipeline.cu" -o "$out/test_cuda_pipeline.o"
    $CXX -o "$out/test_cuda_pipeline" "$out/test_cuda_pipeline.o" "$out/pp_cuda.o" "$out/pp_emu.o" -ldl -lm ;;
esac
case " $targets " in *" train "*)
    $CXX $flags $inc -x c++ -c "$root/examples/train_gpt.cu" -o "$out/train_gpt.o"
    $CXX -o "$out/train_gpt" "$out/train_gpt.o" "$out/pp_cuda.o" "$out/pp_emu.o" -ldl -lm ;;
esac
