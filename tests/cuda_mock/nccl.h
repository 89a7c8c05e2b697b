/* cuda_mock/nccl.h: the emulated NCCL (tests/cuda_emu/nccl.h), which runs
   on this mock's streams through pp_emu_stream_poll */
#include "../cuda_emu/nccl.h"
