// libFuzzer target: Sentry source bundles (SYSB header + ZIP + manifest) as uploaded files. Every
// input ends in bundle contents or a thrown error, within the reader's bounds.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSourceBundle(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    if let bundle = try? SourceBundle.read(Data(bytes: data, count: size)) {
        precondition(bundle.files.count <= SourceBundle.maxFiles, "file cap not enforced")
        precondition(bundle.files.allSatisfy { $0.data.count <= SourceBundle.maxMemberBytes }, "member cap not enforced")
    }
    return 0
}
