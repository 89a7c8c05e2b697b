/* fuzz_replay.c - runs a fuzz target on files, without libFuzzer.

   Build and run (tests/run_tests.sh does this for every target, each on its
   corpus: fuzz_csv.c on tests/fuzz_corpus, fuzz_build.c on
   tests/fuzz_corpus_build, fuzz_cli.c on tests/fuzz_corpus_cli, fuzz_api.c
   on tests/fuzz_corpus_api, fuzz_plan.c on tests/fuzz_corpus_plan):
       cc -std=c99 -O2 -DFUZZ_TARGET='"fuzz_build.c"' tests/fuzz_replay.c -o fuzz_replay -lm
       ./fuzz_replay tests/fuzz_corpus_build/FILE...
   FUZZ_TARGET defaults to fuzz_csv.c; -DFUZZ_PLAN is FUZZ_TARGET
   "fuzz_plan.c". Every file is an input that once crashed the target, or a
   seed; each must now be accepted or refused cleanly (the target aborts
   otherwise). Prints one line with the number of files replayed. */
#if defined(FUZZ_PLAN) && !defined(FUZZ_TARGET)
#define FUZZ_TARGET "fuzz_plan.c"
#endif
#ifndef FUZZ_TARGET
#define FUZZ_TARGET "fuzz_csv.c"
#endif
#include FUZZ_TARGET

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
    printf("fuzz_replay: %s: %d files replayed, none crashed\n", FUZZ_TARGET, argc - 1);
    return 0;
}
