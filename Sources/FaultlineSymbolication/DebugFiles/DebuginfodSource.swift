// debuginfod: debug files fetched by build-id from the servers in DEBUGINFOD_URLS, through
// elfutils' client library (libdebuginfod), which keeps its own cache (positive and negative).
// Last in the CLI's chain: a lookup reaches the network only when no local source had a file.
import FoundationEssentials
import FaultlineProtocol
#if canImport(Glibc)
    import Glibc
#endif

/// The chain's last source: asks the client for the build-id's debuginfo.
public struct DebuginfodSource: DebugFileSource {
    public let client: DebuginfodClient
    public init(client: DebuginfodClient) { self.client = client }
    public func candidates(for request: DebugFileRequest) -> [DebugFileCandidate] {
        guard let id = request.buildID, case .found(let path) = client.debugInfo(id) else { return [] }
        return [DebugFileCandidate(path: path, strategy: "debuginfod")]
    }
}
