// The server's symbolicator: FaultlineSymbolication (libdw-built, persisted per-module indexes)
// over the server's own build-id store. Client-supplied module paths are never searched.
import Foundation
import FaultlineProtocol
import FaultlineSymbolication

final class LibdwFrameSymbolicator: FrameSymbolicating, @unchecked Sendable {
    let symbolicator: Symbolicator

    init(debugRoot: String, indexDirectory: String) {
        // Only the server's own build-id store: client-supplied paths and the host's files are never searched.
        let locator = DebugFileLocator(sources: [BuildIDDirectorySource(directories: [debugRoot])])
        symbolicator = Symbolicator(locator: locator, indexCacheDirectory: indexDirectory)
        // First events answer from the units their frames need; the full index follows on a thread.
        symbolicator.buildFullIndexInBackground = true
    }

    func resolve(buildID: BuildID, modulePath: String?, offset: UInt64, isReturnAddress: Bool) -> SymbolicationOutcome {
        // modulePath comes from the client: deliberately not passed on.
        symbolicator.symbolicate(buildID: buildID, modulePath: nil, relativeAddress: offset, isReturnAddress: isReturnAddress)
    }

    func invalidate(buildID: BuildID) { symbolicator.invalidate(buildID: buildID) }

    /// Any lookup loads the module: locating the file, building the index and persisting it.
    func prepare(buildID: BuildID) {
        _ = symbolicator.symbolicate(buildID: buildID, modulePath: nil, relativeAddress: 0, isReturnAddress: false)
    }
}
