// Chooses the symbolicator the server uses by default: FaultlineSymbolication over the server's
// build-id store, with its indexes persisted in <data>/index.
import Foundation
import FaultlineProtocol

enum DefaultSymbolicator {
    static func make(debugRoot: String, indexDirectory: String) -> FrameSymbolicating {
        LibdwFrameSymbolicator(debugRoot: debugRoot, indexDirectory: indexDirectory)
    }
}
