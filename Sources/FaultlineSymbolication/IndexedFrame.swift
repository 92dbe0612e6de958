// One frame as the index returns it, before names and files are turned into strings.

/// One frame as the index knows it: names and files are still references into the index.
struct IndexedFrame {
    var name: UInt32  // string offset or none
    var file: UInt32  // file index or none
    var line: UInt32
    var column: UInt32
    var isInlined: Bool
    /// The name came from the ELF symbol table (no DWARF function for this address).
    var nameFromSymbolTable: Bool
}
