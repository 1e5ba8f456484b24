# Dependencies come from Debian packages only (see README).
find_package(Threads REQUIRED)
find_package(Eigen3 3.4 REQUIRED NO_MODULE)

# jemalloc is linked statically from Debian's PIC archive and kept private
find_path(MARG_JEMALLOC_INCLUDE_DIR jemalloc/jemalloc.h REQUIRED)
find_library(MARG_JEMALLOC_PIC_LIBRARY NAMES libjemalloc_pic.a REQUIRED)
