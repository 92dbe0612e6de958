// libdw/libelf from elfutils: DWARF and ELF parsing for the symbolicator; libdwfl (part of libdw)
// unwinds the threads of core files.
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <dwarf.h>
#include <gelf.h>
#include <libelf.h>
