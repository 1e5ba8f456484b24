#!/usr/bin/env bash
# A shared object with the STATIC_TLS flag cannot be loaded with dlopen once
# the static TLS surplus is used up; libmarg.so must not carry it.
# usage: no_static_tls.sh PATH-TO-libmarg.so
set -euo pipefail
flags=$(readelf -d "$1" | grep -E '\((FLAGS|FLAGS_1)\)' || true)
echo "${flags:-no FLAGS entries}"
if grep -q STATIC_TLS <<<"$flags"; then
  echo "$1 has the STATIC_TLS flag: dlopen can fail" >&2
  exit 1
fi
echo "no STATIC_TLS in $1"
