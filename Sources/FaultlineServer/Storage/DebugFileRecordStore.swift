// The feature store of debug files: which files were uploaded, the checksums sentry-cli probes
// with, and the source files bundled with them (debuginfod /source).
import Foundation
import FaultlineProtocol

public protocol DebugFileRecordStore: AnyObject, Sendable {
    func recordDebugFile(_ record: DebugFileRecord) throws
    func debugFile(buildID: BuildID) throws -> DebugFileRecord?
    func debugFiles() throws -> [DebugFileRecord]
    /// Whole-file SHA-1 of an assembled upload → its build-id (existence probes of sentry-cli).
    func recordUpload(checksum: String, buildID: BuildID) throws
    func uploadedBuildID(checksum: String) throws -> BuildID?
    func recordSourceFiles(buildID: BuildID, _ files: [SourceFileRecord]) throws
    func sourceFile(buildID: BuildID, path: String) throws -> SourceFileRecord?
}
