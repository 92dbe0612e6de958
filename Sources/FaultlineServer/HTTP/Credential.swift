// What a route requires of a request before its body is read.
import Foundation

/// Who may call a route. Checked from the request line and headers, before any body byte is read.
enum Credential: Sendable {
    /// No credential (health, debuginfod, the redirect to the pages).
    case anyone
    /// A project's public key (Sentry ingest); IngestHandler reads which project it belongs to.
    case publicKey
    /// A Bearer server token (uploads, the JSON read API).
    case serverToken
    /// A web session cookie and, on POST, its CSRF token: checked by WebUI for each page.
    case webSession
}
