# Cross-compiling for 64-bit ARM Linux (e.g. Grace Hopper's Grace CPU) with
# Debian's g++-aarch64-linux-gnu; tests run under qemu-user with the target's
# libraries from /usr/aarch64-linux-gnu (scripts/test-cpus).
#   cmake -S . -B build/aarch64 -DMARG_CUDA=OFF \
#         -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# the GNU triple, which the private jemalloc's configure gets as --host
set(CMAKE_C_COMPILER_TARGET aarch64-linux-gnu)
set(CMAKE_CXX_COMPILER_TARGET aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
# header-only and architecture-independent packages (Eigen, Catch2) come
# from the build machine's /usr
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# ctest (and Catch2's test discovery) run the test programs through qemu
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu)
