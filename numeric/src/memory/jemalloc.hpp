// libmarg's private copy of jemalloc, built with the symbol prefix marg_je_
// (cmake/marg_dependencies.cmake): its header maps the je_* names used here
// onto marg_je_*; JEMALLOC_NO_DEMANGLE keeps it from also defining the
// unprefixed names (malloc, mallocx, ...) as macros. Not installed.
#pragma once

#define JEMALLOC_NO_DEMANGLE
#include <jemalloc/jemalloc.h>
