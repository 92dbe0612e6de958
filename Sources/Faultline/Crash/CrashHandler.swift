// Swift front of the C crash core: start it, and feed it breadcrumbs and context.
import CFaultlineCrash
import CFaultlineCxx
import FaultlineProtocol
import Foundation

enum CrashHandler {
    struct StartError: Error, CustomStringConvertible { let description: String }

    /// Installs the crash core; `then` runs afterwards on the core's background preparation
    /// thread (only when this returns without throwing).
    static func start(crashDirectory: String, then: @escaping @Sendable () -> Void) throws(StartError) {
        final class Continuation { let run: @Sendable () -> Void; init(_ run: @escaping @Sendable () -> Void) { self.run = run } }
        let box = Unmanaged.passRetained(Continuation(then))
        var buffer = [CChar](repeating: 0, count: 512)
        let rc = faultline_crash_start_then(
            crashDirectory, &buffer, buffer.count,
            { raw in
                Unmanaged<Continuation>.fromOpaque(raw!).takeRetainedValue().run()
            }, box.toOpaque())
        if rc != 0 {
            box.release()
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

    /// Copies a breadcrumb already serialised as JSON into the ring the handler reads. Too long: shortened message.
    static func record(breadcrumbBytes: [UInt8]) {
        breadcrumbBytes.withUnsafeBufferPointer { buf in
            buf.withMemoryRebound(to: CChar.self) { _ = faultline_crash_add_breadcrumb($0.baseAddress, $0.count) }
        }
    }

    /// The session a crash of this process ends (the core keeps it apart from the context).
    static func setSession(id: String, started: String) { _ = faultline_crash_set_session(id, started) }

    /// The session's opening update is durably in the outbox: a later crash need not open it.
    static func noteSessionStartQueued() { faultline_crash_session_start_queued() }

    /// One more error captured in the session, for the crashed session's update.
    static func noteSessionError() { faultline_crash_session_error_captured() }

    static func setContext(_ json: [UInt8]) {
        json.withUnsafeBytes { raw in
            _ = faultline_crash_set_context(raw.baseAddress!.assumingMemoryBound(to: CChar.self), raw.count)
        }
    }
}
