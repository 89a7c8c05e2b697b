/* fuzz_cli.c - libFuzzer target for ppsched's command-line parser.

   Build and run:  make fuzz   (clang -fsanitize=fuzzer,address,undefined)
   Replay:         tests/fuzz_replay.c -DFUZZ_TARGET='"fuzz_cli.c"' runs it on
                   every file of tests/fuzz_corpus_cli/ in `make test`.

   The bytes are split at newlines into at most 32 arguments after
   "ppsched", and examples/ppsched.c's parse_args (which prints nothing and
   never exits) reads them. The properties: it returns 0 or 2, with a
   message when 2; what it accepts for a single small schedule (d <= 8, n <=
   24) builds with pp_sched_build and validates, or is refused with a
   message and no schedule. */
#define PPSCHED_NO_MAIN
/* main's helpers (printing, files) go unused here */
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-variable"
#include "../examples/ppsched.c"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char buf[4096], *argv[34], msg[1024], err[PP_ERR_LEN];
    int argc = 1, rc;
    size_t i;
    args A;
    if (size >= sizeof buf) return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    argv[0] = (char *)"ppsched";
    argv[argc++] = buf;
    for (i = 0; i < size && argc < 33; i++)
        if (buf[i] == '\n') { buf[i] = '\0'; argv[argc++] = buf + i + 1; }
    argv[argc] = NULL;
    rc = parse_args(argc, argv, &A, msg, sizeof msg);
    if (rc != 0 && rc != 2) abort();
    if (rc == 2 && msg[0] == '\0') abort();
    if (rc == 0 && A.mode == MODE_BUILD && !A.help && !A.list && A.cfg.devices <= 8 && A.cfg.microbatches <= 24 &&
        A.cfg.chunks <= 4) {
        pp_schedule *s = NULL;
        pp_status st = pp_sched_build(&A.cfg, &s, err);
        if (st == PP_OK && (!s || pp_sched_validate(s, err) != PP_OK)) abort();
        if (st != PP_OK && (s || err[0] == '\0')) abort();
        pp_sched_free(s);
    }
    return 0;
}
