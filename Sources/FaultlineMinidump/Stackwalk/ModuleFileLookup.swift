// Where the walker gets a module's executable and debug file: the caller decides (the server's
// debug-file store, a directory, debuginfod), the walker only asks.
import FaultlineProtocol

/// Finds the files of a dumped module by its build-id and the path it had in the process.
///
/// Contract: return a path to an existing ELF file of that build, or nil. The walker opens what
/// it is given; a file of another build gives wrong unwinds, so match on the build-id.
public struct ModuleFileLookup: Sendable {
    /// Which file of a module is wanted.
    public enum Kind: Sendable, Hashable {
        /// The loaded ELF (its `.eh_frame` and program headers).
        case executable
        /// The separate debug file (`.debug_frame`, symbols).
        case debug
    }

    let find: @Sendable (_ buildID: BuildID?, _ modulePath: String, _ kind: Kind) -> String?

    public init(_ find: @escaping @Sendable (_ buildID: BuildID?, _ modulePath: String, _ kind: Kind) -> String?) {
        self.find = find
    }

    /// Finds nothing: the walk uses only the dump (frame pointers and stack scanning).
    public static let none = ModuleFileLookup { _, _, _ in nil }

    public func callAsFunction(_ buildID: BuildID?, _ modulePath: String, _ kind: Kind) -> String? {
        find(buildID, modulePath, kind)
    }
}
