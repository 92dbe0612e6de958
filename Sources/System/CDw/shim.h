// libdw/libelf from elfutils: DWARF and ELF parsing for the symbolicator; libdwfl (part of libdw)
// for walking the threads of minidumps and core files out of process.
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <dwarf.h>
#include <gelf.h>
#include <libelf.h>
