// libmarg's private copy of jemalloc: every symbol of Debian's archive is
// renamed with the prefix marg_je_ at configure time
// (cmake/marg_dependencies.cmake), so the names declared by jemalloc.h are
// mapped here onto the renamed ones. Not installed.
#pragma once

// declare the je_* names as they are spelled, then point them at marg_je_*
#define JEMALLOC_NO_RENAME
#define JEMALLOC_NO_DEMANGLE
#define je_mallocx marg_je_mallocx
#define je_dallocx marg_je_dallocx
#define je_sdallocx marg_je_sdallocx
#define je_nallocx marg_je_nallocx
#define je_sallocx marg_je_sallocx
#define je_mallctl marg_je_mallctl
#define je_mallctlnametomib marg_je_mallctlnametomib
#define je_mallctlbymib marg_je_mallctlbymib
#define je_malloc_conf marg_je_malloc_conf
#include <jemalloc/jemalloc.h>
