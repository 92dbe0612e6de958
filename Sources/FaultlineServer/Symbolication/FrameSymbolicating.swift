// The seam between the server and the symbolicator: the server asks about one address at a time
// and caches answers; the implementation over FaultlineSymbolication lives in its own file.
// Answers are FaultlineSymbolication's outcomes, so a miss keeps its reason across the seam.
import Foundation
import FaultlineProtocol
import FaultlineSymbolication
import Synchronization

/// Contract: thread-safe; `resolve` returns frames innermost first, or why the address cannot be
/// symbolicated (no debug file, no debug info for the address, …). It never throws: absence is an
/// outcome.
public protocol FrameSymbolicating: Sendable {
    /// `architecture`: the event's, which says how far back from a return address the call lies.
    func resolve(buildID: BuildID, modulePath: String?, offset: UInt64, isReturnAddress: Bool, architecture: CPUArchitecture) -> SymbolicationOutcome
    /// Drops whatever was cached for a build-id whose debug file changed.
    func invalidate(buildID: BuildID)
    /// Builds (and persists) the lookup index for a build-id now rather than at its first lookup.
    func prepare(buildID: BuildID)
}

extension FrameSymbolicating {
    public func prepare(buildID: BuildID) {}
}

/// Memoises another symbolicator per (build-id, offset, kind); only asks it about build-ids
/// the server holds a debug file for, so events from unknown modules cost nothing. The one cache
/// in front of the server's symbolicator: the server keeps one for its lifetime, a backfill run
/// a fresh one (whose `count` is the distinct addresses it asked about).
public final class CachingSymbolicator: FrameSymbolicating, Sendable {
    struct Key: Hashable { let buildID: BuildID; let offset: UInt64; let isReturn: Bool; let architecture: CPUArchitecture }
    private let inner: FrameSymbolicating
    private let known: @Sendable (BuildID) -> Bool
    private struct State {
        var cache: [Key: SymbolicationOutcome] = [:]
        /// Bumped by invalidate: a lookup that started before a new debug file arrived must not
        /// put its (old-file) answer back into the cache after the invalidation.
        var generation: [BuildID: UInt64] = [:]
    }
    private let state = Mutex(State())
    private let capacity: Int

    public init(_ inner: FrameSymbolicating, capacity: Int = 200_000, isKnown: @escaping @Sendable (BuildID) -> Bool = { _ in true }) {
        self.inner = inner
        self.known = isKnown
        self.capacity = capacity
    }

    /// Answers cached now.
    public var count: Int { state.withLock { $0.cache.count } }

    public func resolve(buildID: BuildID, modulePath: String?, offset: UInt64, isReturnAddress: Bool, architecture: CPUArchitecture) -> SymbolicationOutcome {
        guard known(buildID) else { return .unresolved(.missingDebugFile) }
        let key = Key(buildID: buildID, offset: offset, isReturn: isReturnAddress, architecture: architecture)
        let (hit, startedAt) = state.withLock { ($0.cache[key], $0.generation[buildID, default: 0]) }
        if let hit { return hit }
        let result = inner.resolve(buildID: buildID, modulePath: modulePath, offset: offset, isReturnAddress: isReturnAddress, architecture: architecture)
        state.withLock { s in
            guard s.generation[buildID, default: 0] == startedAt else { return }
            if s.cache.count >= capacity { s.cache.removeAll(keepingCapacity: true) }
            s.cache[key] = result
        }
        return result
    }

    /// The answer `resolve` would give without asking the inner symbolicator, or nil when it
    /// would have to (the read path's test for "may this need an index build?").
    public func cached(buildID: BuildID, offset: UInt64, isReturnAddress: Bool, architecture: CPUArchitecture) -> SymbolicationOutcome? {
        guard known(buildID) else { return .unresolved(.missingDebugFile) }
        return state.withLock { $0.cache[Key(buildID: buildID, offset: offset, isReturn: isReturnAddress, architecture: architecture)] }
    }

    public func invalidate(buildID: BuildID) {
        state.withLock { s in
            s.generation[buildID, default: 0] += 1
            s.cache = s.cache.filter { $0.key.buildID != buildID }
        }
        inner.invalidate(buildID: buildID)
    }

    public func prepare(buildID: BuildID) { inner.prepare(buildID: buildID) }
}
