/* emu/pp_emu_hostop.h - the emulator's one non-standard stream
   operation, for an emulated NCCL built on emu/gpu (and on
   emu/mock/cuda_runtime.h). */
#ifndef PP_EMU_HOSTOP_H
#define PP_EMU_HOSTOP_H
#include <cuda_runtime.h>

/* a host operation in stream order that may not be ready yet: fn returns 1
   when done, 0 to be polled again later (other streams may run meanwhile),
   or -1 on failure (the stream's next synchronize returns an error). */
typedef int (*pp_emu_poll_fn)(void *user);
cudaError_t pp_emu_stream_poll(cudaStream_t stream, pp_emu_poll_fn fn, void *user);
/* such an operation reads (write 0) or writes n bytes of device memory at p:
   the emulator checks bounds, use after free and stream order as for a
   kernel (what names the call in reports); 0 when the range is not inside
   one live allocation */
int pp_emu_device_access(const void *p, size_t n, int write, const char *what);

#endif
