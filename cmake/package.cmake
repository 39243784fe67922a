# `cpack` in the build folder makes entrysim_VERSION_ARCH.deb from the
# install layout (cmake/install_layout.cmake) under /usr:
#   sudo apt install ./entrysim_*.deb
# Its Depends are computed by dpkg-shlibdeps from the binary's shared
# libraries (libzydis4.0, libdw1, libsdl2-2.0-0, libsdl2-ttf-2.0-0, zlib1g,
# libc6...), plus what the binary opens by path: the debugger window's font
# (debugger/ui/ui_font.c).  `entrysim kernel build` runs the host's gcc and
# python3 (cli/kbuild.c): recommended, not required to run programs.
# tests/package/deb_test.sh builds the package and runs it from a folder
# it is unpacked into.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME entrysim)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "entrysim maintainers <maintainers@users.noreply.a-seed-b58fb7d8.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "x86-64 CPU and Linux kernel-entry simulator")
set(CPACK_PACKAGE_DESCRIPTION
    "Runs static Linux x86-64, i386 and x32 programs on a simulated CPU under a\n"
    "modeled Linux kernel whose entry code runs as guest code, measures which user\n"
    "values reach the kernel (v4.16 against v4.17), models cycles per phase of each\n"
    "system call, and has a step-through debugger and a gdb stub.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
if(ENTRYSIM_UI)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "fonts-dejavu-core")
endif()
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "gcc, python3")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "gdb, bash-completion")
set(CPACK_STRIP_FILES ON)
include(CPack)
