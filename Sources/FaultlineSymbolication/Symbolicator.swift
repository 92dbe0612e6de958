// Symbolication over libdw: ELF/DWARF reading, per-module indexes, demangling.
import CDw
