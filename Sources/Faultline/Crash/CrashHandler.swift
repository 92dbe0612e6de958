// Swift front of the C crash core: start it, and feed it breadcrumbs and context.
import CFaultlineCrash
import CFaultlineCxx
import FaultlineProtocol
import Foundation

enum CrashHandler {
    struct StartError: Error, CustomStringConvertible { let description: String }

    static func start(crashDirectory: String) throws(StartError) {
        var buffer = [CChar](repeating: 0, count: 512)
        let rc = faultline_crash_start(crashDirectory, &buffer, buffer.count)
        if rc != 0 {
            throw StartError(description: String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        // An uncaught C++ exception (from a C++ library the app calls) says what it was.
        faultline_install_terminate_handler()
    }

    static var isStarted: Bool { faultline_crash_is_started() != 0 }

    /// The event id the next crash report of this process will carry.
    static var nextCrashEventID: String {
        var buffer = [CChar](repeating: 0, count: 33)
        faultline_crash_current_event_id(&buffer)
        return String(decoding: buffer.prefix(32).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Copies a pre-serialised breadcrumb into the ring the handler reads. Too long: shortened message.
    static func record(breadcrumbBytes: [UInt8]) {
        breadcrumbBytes.withUnsafeBufferPointer { buf in
            buf.withMemoryRebound(to: CChar.self) { _ = faultline_crash_add_breadcrumb($0.baseAddress, $0.count) }
        }
    }

    static func setContext(_ context: JSONValue) {
        let data = context.serialized()
        data.withUnsafeBytes { raw in
            _ = faultline_crash_set_context(raw.baseAddress!.assumingMemoryBound(to: CChar.self), raw.count)
        }
    }
}
