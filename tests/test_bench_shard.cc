// test_bench_shard.cc - `entrysim bench --shard I/N`, `--status DIR`,
// `--merge DIR` and the parts of `--slurm` that need no cluster (its
// errors before submitting, --dry-run), through the fake runner
// (tests/bench/fake_runner.c).  The run on a real Slurm is
// tests/slurm/slurm_test.sh.
#include <gtest/gtest.h>

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "bench_test_util.h"

namespace {

size_t count_lines(const std::string &text)
{
    size_t n = 0;
    for (char c : text)
        n += c == '\n';
    return n;
}

// The names in a folder ending with ext.
std::set<std::string> files(const std::string &dir, const std::string &ext)
{
    std::set<std::string> out;
    DIR *d = opendir(dir.c_str());
    for (struct dirent *e; d && (e = readdir(d));) {
        std::string n = e->d_name;
        if (n.size() > ext.size() && n.compare(n.size() - ext.size(), ext.size(), ext) == 0)
            out.insert(n);
    }
    if (d)
        closedir(d);
    return out;
}

// 3 kernels x 2 mitigations x 2 syscalls = 12 cells, and as many
// impossible ones (sysenter32 on amd), which no shard counts
const char *matrix = R"([matrix]
name = "shardy"
kernels = ["v4.16", "dfe6450", "v4.17"]
entries = ["syscall64", "sysenter32"]
cpu = "amd"
mitigations = ["none", "pti"]
syscalls = ["getpid", "getppid"]
iterations = 10
)";
const size_t cells = 12;

class BenchShard : public ::testing::Test {
  protected:
    std::string dir, m, out, err_text, out_text;
    void SetUp() override
    {
        char tmpl[] = "/tmp/es_test_bench_shard_XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir = tmpl;
        m = dir + "/shardy.toml";
        out = dir + "/out";
        spit(m, matrix);
    }
    void TearDown() override
    {
        if (!HasFailure())
            (void)!system(("rm -rf " + dir).c_str());
    }
    // entrysim bench ARGS with ENV; the exit status, stderr and stdout kept.
    int bench(const std::string &args, const std::string &env = "")
    {
        std::string cmd = env + " " ES_TEST_ENTRYSIM " bench " + args + " 2>" + dir +
                          "/stderr >" + dir + "/stdout";
        int st = system(cmd.c_str());
        err_text = slurp(dir + "/stderr");
        out_text = slurp(dir + "/stdout");
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    }
    std::string fake_args(const std::string &o)
    {
        return "--matrix " + m + " --out " + o + " --workloads " ES_TEST_WORKLOADS
               " --runner " ES_TEST_FAKE_RUNNER;
    }
    int shard(int i, int n, const std::string &env = "")
    {
        return bench(fake_args(out) + " --shard " + std::to_string(i) + "/" + std::to_string(n),
                     "FAKE_RUNNER_LOG=" + dir + "/runner.log " + env);
    }
    size_t runner_calls() { return count_lines(slurp(dir + "/runner.log")); }
};

} // namespace

TEST_F(BenchShard, ShardsPartitionTheCellsAndMergeEqualsALocalRun)
{
    for (int i = 1; i <= 5; i++)
        ASSERT_EQ(shard(i, 5), 0) << err_text;
    EXPECT_EQ(runner_calls(), cells); // each cell ran once, in one shard
    EXPECT_EQ(files(out + "/cells", ".tsv").size(), cells);
    EXPECT_TRUE(files(out + "/cells", ".failed").empty());
    EXPECT_TRUE(files(out + "/cells", ".tmp").empty());
    struct stat st;
    EXPECT_NE(stat((out + "/store.tsv").c_str(), &st), 0); // no shared appends
    EXPECT_NE(stat((out + "/results.csv").c_str(), &st), 0); // the merge writes it

    ASSERT_EQ(bench("--status " + out), 0) << err_text;
    EXPECT_NE(out_text.find("shardy: 12 cells: 12 done, 0 failed, 0 left"), std::string::npos)
        << out_text;
    ASSERT_EQ(bench("--merge " + out), 0) << err_text;
    ASSERT_EQ(bench(fake_args(dir + "/local")), 0) << err_text;
    for (const char *f : {"results.csv", "results.json", "chart.svg"}) {
        std::string merged = slurp(out + "/" + f);
        EXPECT_FALSE(merged.empty()) << f;
        EXPECT_EQ(merged, slurp(dir + "/local/" + f)) << f;
    }
    EXPECT_EQ(count_lines(slurp(out + "/results.csv")), 1 + cells);
}

TEST_F(BenchShard, ShardSkipsDoneCellsAndRetriesFailedOnes)
{
    // shard 1 of 2 is runnable cells 0, 2, .. 10; kernel dfe6450 is 4..7
    ASSERT_EQ(shard(1, 2, "FAKE_RUNNER_FAIL=dfe64506"), 1) << err_text;
    EXPECT_EQ(runner_calls(), cells / 2);
    EXPECT_EQ(files(out + "/cells", ".failed").size(), 2u);
    EXPECT_EQ(files(out + "/cells", ".tsv").size(), 4u);

    // status from the files: done, failed (with why), and shard 2's left
    ASSERT_EQ(bench("--status " + out), 1) << err_text;
    EXPECT_NE(out_text.find("12 cells: 4 done, 2 failed, 6 left"), std::string::npos) << out_text;
    EXPECT_NE(out_text.find("failing as asked"), std::string::npos) << out_text;
    // a merge now: the failed and the missing cells say so
    ASSERT_EQ(bench("--merge " + out), 1) << err_text;
    std::string csv = slurp(out + "/results.csv");
    EXPECT_NE(csv.find("not run (no result yet)"), std::string::npos) << csv;
    EXPECT_NE(csv.find("failing as asked"), std::string::npos) << csv;

    // the rerun of shard 1 runs only its failed cells; their failure goes
    ASSERT_EQ(shard(1, 2), 0) << err_text;
    EXPECT_EQ(runner_calls(), cells / 2 + 2);
    EXPECT_TRUE(files(out + "/cells", ".failed").empty());
    ASSERT_EQ(shard(2, 2), 0) << err_text;
    ASSERT_EQ(bench("--status " + out), 0) << err_text;
    ASSERT_EQ(bench("--merge " + out), 0) << err_text;
    ASSERT_EQ(bench(fake_args(dir + "/local")), 0) << err_text;
    EXPECT_EQ(slurp(out + "/results.csv"), slurp(dir + "/local/results.csv"));
}

TEST_F(BenchShard, BadShardsAndFoldersExitTwoWithOneLine)
{
    for (const char *s : {"0/3", "4/3", "3", "1/0", "a/b", "/3"}) {
        EXPECT_EQ(bench(fake_args(out) + " --shard " + s), 2) << s;
        EXPECT_NE(err_text.find("--shard wants I/N"), std::string::npos) << err_text;
    }
    EXPECT_EQ(bench("--status " + dir), 2);
    EXPECT_NE(err_text.find("job/bench.job"), std::string::npos) << err_text;
    EXPECT_EQ(count_lines(err_text), 1u) << err_text;
    EXPECT_EQ(bench("--merge " + dir + "/none"), 2);
    EXPECT_EQ(count_lines(err_text), 1u) << err_text;
}

TEST_F(BenchShard, SlurmWithoutSbatchOnPathExitsTwo)
{
    EXPECT_EQ(bench(fake_args(out) + " --slurm", "PATH=/nonexistent"), 2);
    EXPECT_NE(err_text.find("sbatch not found on PATH"), std::string::npos) << err_text;
    EXPECT_EQ(count_lines(err_text), 1u) << err_text;
    struct stat st;
    EXPECT_NE(stat(out.c_str(), &st), 0); // nothing written
    EXPECT_EQ(bench("--matrix " + m + " --slurm"), 2); // --out is required
    EXPECT_NE(err_text.find("--slurm needs --out DIR"), std::string::npos) << err_text;
    EXPECT_EQ(bench(fake_args(out) + " --slurm --partition 'a b'", "PATH=/nonexistent"), 2);
    EXPECT_NE(err_text.find("want a word"), std::string::npos) << err_text;
}

TEST_F(BenchShard, SlurmDryRunPrintsTheScriptsAndSubmitsNothing)
{
    ASSERT_EQ(bench(fake_args(out) + " --slurm --dry-run --shards 4 --partition short "
                                     "--account lab --time 10:00 --cpus-per-task 2 "
                                     "--sbatch-arg=--qos=low",
                    "PATH=/nonexistent"),
              0)
        << err_text;
    const std::string &s = out_text;
    for (const char *want :
         {"'sbatch' '--parsable'", "'--array' '1-4'", "'--qos=low'", "#SBATCH --partition=short",
          "#SBATCH --account=lab", "#SBATCH --time=10:00", "#SBATCH --cpus-per-task=2",
          "#SBATCH --requeue", "--shard \"$SLURM_ARRAY_TASK_ID/4\"", " -j 2",
          "'--dependency=afterany:ARRAY_JOB_ID'", " bench --merge ", "/out/job/array.sh'",
          "/out/job/merge.sh'", "12 cells left in 4 of 4 shards"})
        EXPECT_NE(s.find(want), std::string::npos) << want << "\n" << s;
    struct stat st;
    EXPECT_NE(stat(out.c_str(), &st), 0); // nothing written

    // with shards 1 and 3 done, only 2 and 4 are left to submit
    ASSERT_EQ(shard(1, 4), 0) << err_text;
    ASSERT_EQ(shard(3, 4), 0) << err_text;
    ASSERT_EQ(bench(fake_args(out) + " --slurm --dry-run --shards 4", "PATH=/nonexistent"), 0);
    EXPECT_NE(out_text.find("'--array' '2,4'"), std::string::npos) << out_text;
    EXPECT_NE(out_text.find("6 cells left in 2 of 4 shards"), std::string::npos) << out_text;
}

// A real cell's figures do not depend on the environment bench runs in
// (a Slurm task has SLURM_* variables and another folder): entrysim run
// gives the guest its environment and the simulated execve copies it onto
// the stack, so bench gives its cells a fixed one.
TEST_F(BenchShard, RealCellsDoNotDependOnTheEnvironment)
{
    std::string real = dir + "/real.toml";
    spit(real, "[matrix]\nkernels = \"v4.17\"\niterations = 20\n");
    std::string args = "--matrix " + real + " --workloads " ES_TEST_WORKLOADS " --out ";
    ASSERT_EQ(bench(args + dir + "/a"), 0) << err_text;
    std::string big(3000, 'x');
    ASSERT_EQ(bench(args + dir + "/b", "cd / && SLURM_JOB_ID=12345 BIG=" + big), 0) << err_text;
    std::string a = slurp(dir + "/a/results.csv");
    EXPECT_NE(a.find(",ok,"), std::string::npos) << a;
    EXPECT_EQ(a, slurp(dir + "/b/results.csv"));
}
