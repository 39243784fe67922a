/* fake_runner.c - stands in for `entrysim run --timing-json` in the bench
 * tests (entrysim bench --runner): takes the same arguments, checks them,
 * and writes a timing report in the docs/TIMING.md shape whose figures are
 * a deterministic function of the arguments (so different cells differ and
 * the same cell repeats).  Controlled by the environment:
 *   FAKE_RUNNER_LOG=FILE    append one line per invocation (the arguments)
 *   FAKE_RUNNER_FAIL=ARG    exit 3 without a report if ARG is an argument
 *   FAKE_RUNNER_HANG=ARG    sleep until killed if ARG is an argument
 *   FAKE_RUNNER_GARBAGE=ARG write a malformed report if ARG is an argument
 *   FAKE_RUNNER_STOP=ARG    if ARG is an argument, SIGTERM to the parent (bench)
 *                           while this cell runs, then hang as above: a stop
 *                           at a known point, with no timer to race
 *   FAKE_RUNNER_STOP_ALL=ARG  the same, then die of SIGTERM too, as a signal
 *                           to the process group (^C, timeout(1)) ends both */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static int has_arg(int argc, char **argv, const char *env)
{
    const char *v = getenv(env);
    for (int i = 1; v && *v && i < argc; i++)
        if (!strcmp(argv[i], v))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    const char *json = NULL, *log = getenv("FAKE_RUNNER_LOG");
    int prog = -1;
    if (argc < 2 || strcmp(argv[1], "run")) {
        fprintf(stderr, "fake_runner: expected `run ...`\n");
        return 2;
    }
    for (int i = 2; i < argc && prog < 0; i++) {
        if (!strcmp(argv[i], "--timing-json") && i + 1 < argc) {
            json = argv[++i];
        } else if (!strcmp(argv[i], "--")) {
            prog = i + 1;
        } else if (!strcmp(argv[i], "--uarch") || !strcmp(argv[i], "--convention") ||
                   !strcmp(argv[i], "--patches") || !strcmp(argv[i], "--mitigations") ||
                   !strcmp(argv[i], "--cpu")) {
            i++;
        } else if (strcmp(argv[i], "--deterministic")) {
            fprintf(stderr, "fake_runner: unexpected option %s\n", argv[i]);
            return 2;
        }
    }
    if (!json || prog < 0 || prog >= argc) {
        fprintf(stderr, "fake_runner: no --timing-json or no program\n");
        return 2;
    }
    if (log) {
        FILE *f = fopen(log, "a");
        if (f) {
            for (int i = 1; i < argc; i++)
                fprintf(f, "%s%s", i > 1 ? " " : "", argv[i]);
            fputc('\n', f);
            fclose(f);
        }
    }
    if (access(argv[prog], R_OK)) {
        fprintf(stderr, "fake_runner: %s: not found\n", argv[prog]);
        return 127;
    }
    if (has_arg(argc, argv, "FAKE_RUNNER_FAIL")) {
        fprintf(stderr, "fake_runner: failing as asked\n");
        return 3;
    }
    int stop = has_arg(argc, argv, "FAKE_RUNNER_STOP"), stop_all = has_arg(argc, argv,
                                                                         "FAKE_RUNNER_STOP_ALL");
    if (stop || stop_all)
        kill(getppid(), SIGTERM);
    if (stop_all)
        raise(SIGTERM);
    /* bounded, so a test that fails to kill it leaves nothing running long */
    int hang = stop || has_arg(argc, argv, "FAKE_RUNNER_HANG");
    for (int i = 0; i < 30 && hang; i++)
        sleep(1);
    if (hang)
        return 4;
    FILE *f = fopen(json, "w");
    if (!f)
        return 1;
    if (has_arg(argc, argv, "FAKE_RUNNER_GARBAGE")) {
        fputs("{\"cycles\": 12, \"instructions\": [", f);
        fclose(f);
        return 0;
    }
    /* figures from the arguments other than the report path */
    uint64_t h = 0xcbf29ce484222325ULL;
    for (int i = 1; i < argc; i++)
        if (argv[i] != json)
            for (const char *p = argv[i]; *p; p++)
                h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
    long n = atol(argv[argc - 1]);
    if (n <= 0)
        n = 1;
    static const char *const ph[] = {"hw_entry", "entry_asm", "dispatch", "stub", "body",
                                     "exit_path", "hw_exit"};
    long per[7], sum = 0;
    for (int p = 0; p < 7; p++)
        sum += per[p] = 10 + (long)((h >> (p * 8)) % 90);
    const char *sc = prog + 2 < argc ? argv[prog + 2] : "getpid";
    fprintf(f, "{\"schema\": \"fake\", \"extra\": [1, {\"x\": null}, \"\\u00e9\"],\n"
               " \"cycles\": %ld, \"instructions\": %ld, \"ipc\": 0.5,\n"
               " \"syscalls\": {\"count\": %ld, \"cycles\": %ld, \"phases\": {",
            sum * (n + 1) + 1000, (sum * (n + 1) + 1000) / 2, n + 1, sum * (n + 1));
    for (int p = 0; p < 7; p++)
        fprintf(f, "%s\"%s\": %ld", p ? ", " : "", ph[p], per[p] * (n + 1));
    fprintf(f, "}},\n \"per_syscall\": [{\"name\": \"exit_group\", \"count\": 1, \"cycles\": %ld, "
               "\"phases\": {}},\n  {\"name\": \"__x64_sys_%s\", \"count\": %ld, \"cycles\": %ld, "
               "\"phases\": {",
            sum, sc, n, sum * n);
    for (int p = 0; p < 7; p++)
        fprintf(f, "%s\"%s\": %ld", p ? ", " : "", ph[p], per[p] * n);
    fputs("}}]}\n", f);
    printf("fake run of %s\n", argv[prog]);
    return fclose(f) ? 1 : 0;
}
