// Chooses the symbolicator the server uses by default.
import Foundation
import FaultlineProtocol

enum DefaultSymbolicator {
    static func make(debugRoot: String, indexDirectory: String) -> FrameSymbolicating {
        PendingSymbolicator()
    }
}

/// TEMPORARY until FaultlineSymbolication lands on main: resolves nothing.
struct PendingSymbolicator: FrameSymbolicating {
    func resolve(buildID: BuildID, modulePath: String?, offset: UInt64, isReturnAddress: Bool) -> [ResolvedFrame]? { nil }
    func invalidate(buildID: BuildID) {}
}
