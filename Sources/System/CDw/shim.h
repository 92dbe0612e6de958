// libdw/libelf from elfutils: DWARF and ELF parsing for the symbolicator; libdwfl (part of libdw)
// for walking a minidump's stacks out of process.
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <dwarf.h>
#include <gelf.h>
#include <libelf.h>
