// Whose code a frame is: the app's, Faultline's own, or the system's (libraries, the runtime).
// The one place a frame's role is decided for every renderer, on FaultlineOwnFrames' rule.
import FaultlineProtocol

extension SymbolicatedStack {
    public enum Role: String, Sendable, Hashable {
        case inApp
        /// Faultline's own code (the crash handler, the C++ terminate handler, the SDK's capture,
        /// logging and tracing wrappers): never the culprit, hidden or dimmed by every renderer.
        case faultline
        case system

        /// `markedOwn`: the client said so (the crash core's mark, or a Faultline-only module).
        /// Otherwise a call is Faultline's by its name, whoever inlined it; else the app's when
        /// the client says its frame is in-app.
        public static func of(markedOwn: Bool, module: String?, function: String?, mangledFunction: String?, inApp: Bool) -> Role {
            if markedOwn || module.map(FaultlineOwnFrames.isOwn(modulePath:)) == true
                || FaultlineOwnFrames.isOwn(function: function, rawFunction: mangledFunction)
            {
                return .faultline
            }
            return inApp ? .inApp : .system
        }
    }
}
