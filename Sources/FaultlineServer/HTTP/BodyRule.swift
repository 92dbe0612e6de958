// How large a body a route accepts, and from whom.
import Foundation

/// The body a route accepts on POST/PUT; anything else sent a body is refused before reading it.
enum BodyRule: Sendable {
    case none
    /// POST only, up to `IngestLimits.maxRequestBytes`.
    case ingest
    /// POST or PUT, up to the given bytes.
    case upload(maxBytes: Int)
    /// POST only, to a path below /ui/, up to `WebUI.maxFormBytes`.
    case webForm
    /// POST only: a gzip'd log archive, authenticated and sized by LogArchives (from its headers).
    case logArchive
}
