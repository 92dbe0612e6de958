// The server's symbolicator: FaultlineSymbolication (libdw-built, persisted per-module indexes)
// over the server's own build-id store. Client-supplied module paths are never searched.
import Foundation
import FaultlineProtocol
import FaultlineSymbolication
import Synchronization

final class LibdwFrameSymbolicator: FrameSymbolicating, Sendable {
    let symbolicator: Symbolicator
    /// Holds the full index of each debug file prepared on arrival (`prepare`), built at once; its
    /// build-ids are looked up here, every other one in `symbolicator`.
    private let arrivals: Symbolicator
    private let prepared = Mutex<Set<BuildID>>([])

    init(debugRoot: String, indexDirectory: String) {
        // Only the server's own build-id store: client-supplied paths and the host's files are never searched.
        var locator = DebugFileLocator(sources: [BuildIDDirectorySource(directories: [debugRoot])])
        locator.followsSupplementaryPaths = false  // a dwz file's supplementary file by its build-id only
        symbolicator = Symbolicator(locator: locator, indexCacheDirectory: indexDirectory)
        // First events answer from the units their frames need; the full index follows on a thread.
        symbolicator.buildFullIndexInBackground = true
        arrivals = Symbolicator(locator: locator, indexCacheDirectory: indexDirectory)
        arrivals.lazyColdPath = false
        // An uploaded file's DWARF names its .dwo files by path: never opened on this machine.
        symbolicator.opensSplitUnits = false
        arrivals.opensSplitUnits = false
    }

    func resolve(buildID: BuildID, modulePath: String?, offset: UInt64, isReturnAddress: Bool, architecture: CPUArchitecture) -> SymbolicationOutcome {
        // modulePath comes from the client: deliberately not passed on.
        let s = prepared.withLock { $0.contains(buildID) } ? arrivals : symbolicator
        return s.symbolicate(buildID: buildID, modulePath: nil, relativeAddress: offset, isReturnAddress: isReturnAddress, architecture: architecture)
    }

    func invalidate(buildID: BuildID) {
        prepared.withLock { _ = $0.remove(buildID) }
        symbolicator.invalidate(buildID: buildID)
        arrivals.invalidate(buildID: buildID)
    }

    /// Builds the full index now (persisted where it can be) and answers this build-id from it.
    /// Not the lazy cold path: that starts from the units of one address and rebuilds its partial
    /// index from all the units it holds each time a lookup needs one more, so a backfill's 15,000
    /// addresses spread over a binary cost about 1 s more than one full build (tools/results/backfill-*).
    /// The lazy module `symbolicator` may hold from an earlier read is dropped.
    func prepare(buildID: BuildID) {
        // A program counter: no step back, so any architecture gives the same lookup.
        _ = arrivals.symbolicate(buildID: buildID, modulePath: nil, relativeAddress: 0, isReturnAddress: false, architecture: .ofEventsWithoutArch)
        prepared.withLock { _ = $0.insert(buildID) }
        symbolicator.invalidate(buildID: buildID)
    }
}
