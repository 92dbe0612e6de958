// `MinidumpWalking` over FaultlineMinidump with the files the server holds: a module's executable
// and debug file are looked up by its build-id in the debug-file store (what `faultline upload`,
// sentry-cli and the debuginfod upstream put there), never by the path it had on the client's
// machine. A module with no debug file is asked of the debuginfod upstreams, when there are any;
// its arrival queues the backfill that walks the dump again.
import Foundation
import FaultlineMinidump
import FaultlineProtocol

struct DebugFileMinidumpWalker: MinidumpWalking {
    let debugFiles: DebugFileStore
    let upstream: UpstreamFetcher?

    func walk(_ bytes: Data) throws -> WalkedMinidump {
        let dump = try Minidump(bytes: [UInt8](bytes))
        // A well-formed dump of nothing (no stream at all) is no crash to store, as `faultline
        // symbolicate` refuses it too.
        guard !dump.threads.isEmpty || dump.exception != nil else { throw NothingOfACrash() }
        let (files, upstream) = (debugFiles, self.upstream)
        let lookup = ModuleFileLookup { buildID, _, kind in
            guard let buildID else { return nil }
            let path = kind == .executable ? files.executablePath(buildID) : files.debugInfoPath(buildID)
            if access(path, R_OK) == 0 { return path }
            if kind == .debug { upstream?.want(buildID) }
            return nil
        }
        let walk = MinidumpStackwalker(lookup: lookup).walk(dump)
        let event = FaultlineMinidump.MinidumpEvent.make(
            dump: dump, walk: walk, eventID: Keys.randomHex(bytes: 16), timestamp: Date().timeIntervalSince1970)
        return WalkedMinidump(event: event, moduleBuildIDs: Array(Set(dump.modules.compactMap(\.buildID))))
    }
}

/// A minidump without a thread list and without an exception stream.
struct NothingOfACrash: Error, CustomStringConvertible {
    var description: String { "the dump has no thread list and no exception stream: nothing of a crash" }
}
