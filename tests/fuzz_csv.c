/* fuzz_csv.c - libFuzzer target for pp_sched_from_csv (the PyTorch CSV parser).

   Build and run:  make fuzz        (clang -fsanitize=fuzzer,address; runs 60 s,
                                     FUZZ_TIME=N to change; new crashers land in
                                     fuzz-out/, copy them to tests/fuzz_corpus/)
   Replay:         tests/fuzz_replay.c runs this function on every file in
                   tests/fuzz_corpus/ in `make test`, with no libFuzzer.

   The property: any bytes give PP_OK with a schedule that validates, or a
   status with a message; never a crash, a leak or a read out of bounds. A
   message of a refused file must be non-empty. */
#define PP_SCHED_IMPLEMENTATION
#include "../pp_sched.h"
#define PP_SCHED_IO_IMPLEMENTATION
#include "../pp_sched_io.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char err[PP_ERR_LEN];
    pp_schedule *s = NULL;
    pp_config cfg;
    pp_status st;
    memset(&cfg, 0, sizeof cfg);
    cfg.times.f = 1;
    cfg.times.b = 2;
    cfg.times.w = 1;
    cfg.times.comm = 0.1;
    err[0] = 0;
    st = pp_sched_from_csv((const char *)data, size, &cfg, &s, err);
    if (st == PP_OK) {
        if (!s || pp_sched_validate(s, err) != PP_OK) abort();
        pp_sched_free(s);
    } else if (s != NULL || err[0] == 0) {
        abort();
    }
    return 0;
}
