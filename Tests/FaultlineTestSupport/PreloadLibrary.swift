// The LD_PRELOAD crash handler (tools/build-preload) for tests that crash unmodified programs:
// built once per test process into a temporary directory that every such test shares, instead
// of once per test into its own (the same sources, the same flags, several seconds each).
import Foundation
import Synchronization

public enum PreloadLibrary {
    private static let built = Mutex<Result<String, Error>?>(nil)

    /// The path of `libfaultline-preload.so`; a build that failed fails every caller with its
    /// message (never a skip: a broken build must show).
    public static func path() throws -> String {
        try built.withLock { cached in
            if let cached { return try cached.get() }
            let dir = TestSupport.makeTemporaryDirectory("faultline-preload")
            let result = Result {
                try TestSupport.shell("'\(TestSupport.repositoryRoot().path)/tools/build-preload' '\(dir)'")
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            }
            cached = result
            return try result.get()
        }
    }

    /// The crash core as a static archive (`libfaultline-crash.a`, built beside the preload
    /// library), and what a C program that links it needs on its command line after its sources.
    public static func staticCoreLinkArguments() throws -> String {
        let dir = (try path() as NSString).deletingLastPathComponent
        #if arch(aarch64)
            let unwind = "-lunwind-aarch64"
        #else
            let unwind = "-lunwind-x86_64"
        #endif
        return "'\(dir)/libfaultline-crash.a' \(unwind) -lunwind -lpthread -ldl"
    }

    /// The crash core's public header directory, for `cc -I`.
    public static var headerDirectory: String {
        TestSupport.repositoryRoot().appendingPathComponent("Sources/CFaultlineCrash/include").path
    }
}
