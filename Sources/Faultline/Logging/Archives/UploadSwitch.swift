// The server's log-upload switch as this install last heard it, kept on disk so that "off"
// holds across restarts until the server says "on" again.
//
// Wire (docs/SERVER.md, "Log archives"): every answer of `/api/<project>/log-archive/` carries
// `X-Faultline-Log-Upload: on|off` and the same value as the JSON field `log_upload`.
import Foundation
import FaultlineCrashPickup
import Synchronization
import FaultlineFiles

final class UploadSwitch: Sendable {
    enum State: String, Sendable { case on, off }
    let file: String
    private let state: Mutex<State>

    init(file: String) {
        self.file = file
        let saved = (try? String(contentsOfFile: file, encoding: .utf8)).map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        state = Mutex(saved.flatMap(State.init(rawValue:)) ?? .on)
    }

    var current: State { state.withLock { $0 } }

    /// Records what the server said; written through (atomically, fsync'd) when it changed.
    func set(_ new: State) {
        let changed = state.withLock { s -> Bool in
            defer { s = new }; return s != new
        }
        if changed { try? AtomicFile.write(Data(new.rawValue.utf8), to: file, sync: true) }
    }

    /// The value of the header or JSON field; nil for anything else.
    static func parse(_ value: String?) -> State? {
        value.flatMap { State(rawValue: $0.trimmingCharacters(in: .whitespaces).lowercased()) }
    }
}
