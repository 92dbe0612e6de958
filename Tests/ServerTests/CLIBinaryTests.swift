// The `faultline` binary (CLI and server) must not carry the SDK's libc interposers: they would
// take over pthread_create and the signal masks of every thread the server starts.
import FaultlineTestSupport
import Foundation
import XCTest

final class CLIBinaryTests: XCTestCase {
    static let interposers: Set<String> = ["pthread_create", "sigprocmask", "pthread_sigmask"]

    /// Interposers `nm` lists as defined in the binary, in its symbol table or its dynamic one.
    func definedInterposers(_ binary: String) throws -> Set<String> {
        var found = Set<String>()
        for flags in ["--defined-only", "-D --defined-only"] {
            let out = (try? TestSupport.shell("nm \(flags) '\(binary)' 2>/dev/null")) ?? ""
            for line in out.split(separator: "\n") {
                guard let name = line.split(separator: " ").last.map(String.init) else { continue }
                let bare = String(name.split(separator: "@").first ?? "")
                if Self.interposers.contains(bare) { found.insert(bare) }
            }
        }
        return found
    }

    func testTheFaultlineBinaryDefinesNoneOfTheSDKsInterposers() throws {
        XCTAssertEqual(try definedInterposers(TestSupport.product("faultline")), [],
                       "the faultline executable links the SDK's crash core; depend on FaultlineCrashPickup, not Faultline")
    }

    /// The check above would notice: a program that links the SDK defines them.
    func testAProgramLinkingTheSDKDefinesThem() throws {
        XCTAssertEqual(try definedInterposers(TestSupport.product("faultline-crasher")), Self.interposers)
    }
}
