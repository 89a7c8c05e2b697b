/* fuzz_replay.c - runs a fuzz target on files, without libFuzzer: fuzz_csv.c,
   or with -DFUZZ_PLAN fuzz_plan.c (the planner's request).

   Build and run (tests/run_tests.sh does this on every file of tests/fuzz_corpus):
       cc -std=c99 -O2 tests/fuzz_replay.c -o fuzz_replay -lm && ./fuzz_replay tests/fuzz_corpus/FILE...
   Every file is an input that once crashed the parser, or a seed; each must
   now be accepted or refused cleanly (the target aborts otherwise). Prints
   one line with the number of files replayed. */
#ifdef FUZZ_PLAN
#include "fuzz_plan.c"
#else
#include "fuzz_csv.c"
#endif

#include <stdio.h>

int main(int argc, char **argv) {
    int i;
    for (i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        char *buf;
        long size;
        if (!f) { fprintf(stderr, "fuzz_replay: cannot open %s\n", argv[i]); return 1; }
        fseek(f, 0, SEEK_END);
        size = ftell(f);
        rewind(f);
        buf = (char *)malloc((size_t)size + 1);
        if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size) { fprintf(stderr, "fuzz_replay: cannot read %s\n", argv[i]); return 1; }
        fclose(f);
        LLVMFuzzerTestOneInput((const uint8_t *)buf, (size_t)size);
        free(buf);
    }
    printf("fuzz_replay: %d files replayed, none crashed\n", argc - 1);
    return 0;
}
