// libdw/libelf from elfutils: DWARF and ELF parsing for the symbolicator.
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <dwarf.h>
#include <gelf.h>
#include <libelf.h>
