// libFuzzer target: the crash-report reader (a report file left by a crashed process, read at the
// next launch and by `faultline symbolicate`; it may be cut short or corrupt).
import Foundation
import FaultlineProtocol

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCrashReport(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    if let report = try? CrashReport.parse(Data(bytes: data, count: size)) {
        for f in report.frames { _ = report.module(containing: f.address) }
    }
    return 0
}
