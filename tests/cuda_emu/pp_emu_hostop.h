/* tests/cuda_emu/pp_emu_hostop.h - the one non-standard hook both host
   runtimes (tests/cuda_mock and tests/cuda_emu) provide next to
   cudaLaunchHostFunc. Include it after cuda_runtime.h. The emulated NCCL
   (tests/cuda_emu/nccl.h) is written on the CUDA runtime API plus this. */
#ifndef PP_EMU_HOSTOP_H
#define PP_EMU_HOSTOP_H

/* a host operation in stream order that may not be ready yet: fn returns 1
   when done, 0 to be polled again later (other streams may run meanwhile),
   or -1 on failure (the stream's next synchronize returns an error). */
typedef int (*pp_emu_poll_fn)(void *user);
cudaError_t pp_emu_stream_poll(cudaStream_t stream, pp_emu_poll_fn fn, void *user);

#endif
