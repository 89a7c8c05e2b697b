/* tests/cuda_emu/pp_emu_hostop.h - the emulator's one non-standard stream
   operation, for an emulated NCCL built on tests/cuda_emu (and on
   tests/cuda_mock/cuda_runtime.h). */
#ifndef PP_EMU_HOSTOP_H
#define PP_EMU_HOSTOP_H
#include <cuda_runtime.h>

/* a host operation in stream order that may not be ready yet: fn returns 1
   when done, 0 to be polled again later (other streams may run meanwhile),
   or -1 on failure (the stream's next synchronize returns an error). */
typedef int (*pp_emu_poll_fn)(void *user);
cudaError_t pp_emu_stream_poll(cudaStream_t stream, pp_emu_poll_fn fn, void *user);

#endif
