// The last 32 breadcrumbs: kept in memory for events and copied into the crash handler's ring.
import Foundation
import FaultlineProtocol
import Synchronization

final class BreadcrumbStore: Sendable {
    static let shared = BreadcrumbStore()
    static let capacity = 32
    private static let maxBytes = 1024  // the crash core's slot size

    private let recent = Mutex<[JSONValue]>([])

    func add(_ crumb: Breadcrumb) {
        var json = crumb.json
        var bytes = json.serialized()
        if bytes.count > BreadcrumbStore.maxBytes {
            // Keep it in the ring with a shortened message rather than losing it.
            json["data"] = .object([:])
            json["message"] = .string(String(crumb.message.prefix(600)) + "…")
            bytes = json.serialized()
        }
        recent.withLock { r in
            r.append(json)
            if r.count > BreadcrumbStore.capacity { r.removeFirst(r.count - BreadcrumbStore.capacity) }
        }
        if bytes.count <= BreadcrumbStore.maxBytes { CrashHandler.record(breadcrumbJSON: bytes) }
    }

    var snapshot: [JSONValue] { recent.withLock { $0 } }
}
