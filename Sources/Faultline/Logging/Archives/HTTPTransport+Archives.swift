// The log-archive requests on the SDK's transport: the same client (bounded answer, no
// redirects), timeout and answer classification (429/Retry-After, 413, 3xx, 4xx, 5xx) as
// envelopes. The body is already gzip, so it is sent as it is (`application/gzip`), not
// compressed again.
import Foundation
import FaultlineProtocol

extension HTTPTransport: ArchivePosting {
    func postArchive(_ body: Data, url: URL, headers: [String: String]) -> ArchiveAnswer {
        perform(
            HTTPRequest(
                method: "POST", url: url, headers: [("Content-Type", "application/gzip")] + Self.ordered(headers),
                body: body, timeout: max(timeout, 60)))
    }

    func askArchiveSwitch(url: URL, headers: [String: String]) -> ArchiveAnswer {
        perform(HTTPRequest(method: "GET", url: url, headers: Self.ordered(headers), body: nil, timeout: timeout))
    }

    private static func ordered(_ headers: [String: String]) -> [(name: String, value: String)] {
        headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    private func perform(_ request: HTTPRequest) -> ArchiveAnswer {
        switch client.perform(request) {
        case .failure(let failure): return ArchiveAnswer(outcome: .retryable(reason: failure.description), logUpload: nil)
        case .success(let answer):
            let limits = RateLimits.parse(header: answer.header(HeaderName.sentryRateLimits))
            // The JSON field only from a body that arrived whole and plain (≤ 64 KiB).
            let field =
                UploadSwitch.parse(answer.header(HeaderName.logUpload))
                ?? answer.completePlainBody.flatMap { try? JSONValue.parse($0) }.flatMap { UploadSwitch.parse($0["log_upload"]?.stringValue) }
            noteRefusedKey(answer)
            return ArchiveAnswer(outcome: Self.classify(answer, limits: limits), logUpload: field)
        }
    }
}
