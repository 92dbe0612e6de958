// Which function name address mode prints per frame: llvm-symbolizer's `--functions=` (its
// FunctionNameKind). `short` (DW_AT_name without the symbol table) is not offered: the index keeps
// one name per scope, the linkage name.

/// The function line of each frame in address mode.
public enum FunctionNameKind: Sendable {
    /// The linkage name (demangled unless `--no-demangle`), the out-of-line frame named by the ELF
    /// symbol covering the address: llvm-symbolizer's default, `--functions` and `--functions=linkage`.
    case linkage
    /// No function line. As in llvm-symbolizer, the symbol table is then not consulted at all, so a
    /// frame known only from an ELF symbol prints `??:0:0` (not its STT_FILE name).
    case none
}
