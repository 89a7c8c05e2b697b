/* emu/mock/nccl.h: the emulated NCCL (emu/nccl.h), which runs
   on this mock's streams through pp_emu_stream_poll */
#include "../nccl.h"
