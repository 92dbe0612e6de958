// What a lookup yields: frames (innermost first), or the reason there are none.

/// One frame of a symbolicated address. A lookup yields innermost first; the last frame is the
/// out-of-line function, the ones before it were inlined into it.
public struct SymbolicatedFrame: Sendable, Hashable {
    /// Demangled name (full form), or the raw name for C.
    public var function: String?
    /// The name as the binary spells it (linkage name / ELF symbol), when it differs or is mangled.
    public var mangledFunction: String?
    public var file: String?
    public var line: Int?
    public var column: Int?
    public var isInlined: Bool
    /// No DWARF covers this address: the name comes from `.symtab`/`.dynsym` and there is no line.
    public var fromSymbolTable: Bool
    /// Report mode: the line table said line 0 (`<compiler-generated>`) here, and file:line:column
    /// are the nearest meaningful location in the same inline scope (or, for a `Swift runtime
    /// failure: …` frame, the user's line that trapped): a guess, as gdb makes it, not the table's word.
    public var isInferred: Bool = false

    public init(
        function: String?, mangledFunction: String? = nil, file: String? = nil, line: Int? = nil,
        column: Int? = nil, isInlined: Bool = false, fromSymbolTable: Bool = false
    ) {
        self.function = function
        self.mangledFunction = mangledFunction
        self.file = file
        self.line = line
        self.column = column
        self.isInlined = isInlined
        self.fromSymbolTable = fromSymbolTable
    }

    /// The short demangled form (`Foo.bar(x:)`, `ns::f<int>`), or `function` for C names.
    public var shortFunction: String? {
        if let m = mangledFunction, let s = Demangler.demangle(m, style: .short) { return s }
        return function
    }
}

/// Why an address could not be symbolicated. Not an error: the report is still shown.
public enum UnresolvedReason: String, Sendable, Hashable {
    /// No file with debug information or symbols was found for the module.
    case missingDebugFile
    /// The debug file has no function or line for this address.
    case noDebugInfoForAddress
    /// The address lies in no known module.
    case notInAnyModule
    /// Files were found for the module's path or debuglink, but they belong to another build.
    case buildIDMismatch
    /// A debug file was found but could not be read.
    case unreadableDebugFile
    /// The debug file was made by dwz and its supplementary file (`.gnu_debugaltlink` /
    /// `.debug_sup`) was not found, and no file offers ELF symbols instead.
    case missingSupplementaryFile

    public var message: String {
        switch self {
        case .missingDebugFile: return "missing debug file"
        case .noDebugInfoForAddress: return "no debug info for this address"
        case .notInAnyModule: return "not in any module"
        case .buildIDMismatch: return "debug file has a different build-id"
        case .unreadableDebugFile: return "debug file unreadable"
        case .missingSupplementaryFile: return "the debug file's supplementary (dwz) file is missing"
        }
    }
}

struct UnresolvedReasonError: Error { let reason: UnresolvedReason }

public enum SymbolicationOutcome: Sendable, Hashable {
    /// Innermost first; the last frame is the out-of-line function.
    case resolved([SymbolicatedFrame])
    case unresolved(UnresolvedReason)

    /// The frames when resolved, nil otherwise.
    public var frames: [SymbolicatedFrame]? { if case .resolved(let f) = self { return f } else { return nil } }
}
