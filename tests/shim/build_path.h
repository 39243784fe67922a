/* build_path.h - where the build put the programs tests run (guest/,
 * kernel_model/tests/, bench/): ES_BUILD_DIR is the CMake binary directory,
 * given to every test through es_test_shim. */
#ifndef ENTRYSIM_TEST_BUILD_PATH_H
#define ENTRYSIM_TEST_BUILD_PATH_H

#include <string>

/* "guest/asm_hello" -> "<build>/guest/asm_hello" */
inline std::string es_build_path(const std::string &rel)
{
    return std::string(ES_BUILD_DIR) + "/" + rel;
}

#endif
