// The server's symbolicator: FaultlineSymbolication (libdw-built, persisted per-module indexes)
// over the server's own build-id store. Client-supplied module paths are never searched.
import Foundation
import FaultlineProtocol
import FaultlineSymbolication

final class LibdwFrameSymbolicator: FrameSymbolicating, @unchecked Sendable {
    let symbolicator: Symbolicator
    /// Builds a newly arrived debug file's full index at once and persists it (`prepare`); it keeps
    /// no module: lookups go through `symbolicator`, which then loads the persisted index.
    private let arrivals: Symbolicator

    init(debugRoot: String, indexDirectory: String) {
        // Only the server's own build-id store: client-supplied paths and the host's files are never searched.
        let locator = DebugFileLocator(sources: [BuildIDDirectorySource(directories: [debugRoot])])
        symbolicator = Symbolicator(locator: locator, indexCacheDirectory: indexDirectory)
        // First events answer from the units their frames need; the full index follows on a thread.
        symbolicator.buildFullIndexInBackground = true
        arrivals = Symbolicator(locator: locator, indexCacheDirectory: indexDirectory)
        arrivals.lazyColdPath = false
    }

    func resolve(buildID: BuildID, modulePath: String?, offset: UInt64, isReturnAddress: Bool) -> SymbolicationOutcome {
        // modulePath comes from the client: deliberately not passed on.
        symbolicator.symbolicate(buildID: buildID, modulePath: nil, relativeAddress: offset, isReturnAddress: isReturnAddress)
    }

    func invalidate(buildID: BuildID) { symbolicator.invalidate(buildID: buildID) }

    /// The full index, built and persisted now, then loaded for lookups. Not through the lazy cold
    /// path: that starts from the units of one address and rebuilds its partial index from all the
    /// units it holds each time a lookup needs one more, so a backfill's 15,000 addresses spread over
    /// a binary cost it about 1 s more than one full build (tools/results/backfill-*). Where the
    /// index cannot be persisted (no cache, split units missing) lookups fall back to that path.
    func prepare(buildID: BuildID) {
        _ = arrivals.symbolicate(buildID: buildID, modulePath: nil, relativeAddress: 0, isReturnAddress: false)
        arrivals.invalidate(buildID: buildID)  // its copy only; the persisted index stays
        _ = symbolicator.symbolicate(buildID: buildID, modulePath: nil, relativeAddress: 0, isReturnAddress: false)
    }
}
