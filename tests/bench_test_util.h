// bench_test_util.h - file helpers shared by test_bench.cc and
// test_bench_shard.cc.
#ifndef ENTRYSIM_TESTS_BENCH_TEST_UTIL_H
#define ENTRYSIM_TESTS_BENCH_TEST_UTIL_H

#include <fstream>
#include <sstream>
#include <string>

// The whole file ("" when it cannot be read).
inline std::string slurp(const std::string &path)
{
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

inline void spit(const std::string &path, const std::string &text)
{
    std::ofstream f(path, std::ios::binary);
    f << text;
}

#endif
