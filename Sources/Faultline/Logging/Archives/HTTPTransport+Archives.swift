// The log-archive requests on the SDK's transport: the same session, timeout and answer
// classification (429/Retry-After, 413, 4xx, 5xx) as envelopes. The body is already gzip, so it
// is sent as it is (`application/gzip`), not compressed again.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import FaultlineProtocol

extension HTTPTransport: ArchivePosting {
    func postArchive(_ body: Data, url: URL, headers: [String: String]) -> ArchiveAnswer {
        var request = URLRequest(url: url, timeoutInterval: max(timeout, 60))
        request.httpMethod = "POST"
        request.setValue("application/gzip", forHTTPHeaderField: "Content-Type")
        for (k, v) in headers { request.setValue(v, forHTTPHeaderField: k) }
        request.httpBody = body
        return perform(request)
    }

    func askArchiveSwitch(url: URL, headers: [String: String]) -> ArchiveAnswer {
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = "GET"
        for (k, v) in headers { request.setValue(v, forHTTPHeaderField: k) }
        return perform(request)
    }

    private func perform(_ request: URLRequest) -> ArchiveAnswer {
        let (data, response, error) = roundTrip(request)
        if let error { return ArchiveAnswer(outcome: .retryable(reason: error), logUpload: nil) }
        guard let http = response else { return ArchiveAnswer(outcome: .retryable(reason: "no HTTP response"), logUpload: nil) }
        let limits = RateLimits.parse(header: http.value(forHTTPHeaderField: "X-Sentry-Rate-Limits"))
        let outcome = Self.classify(status: http.statusCode, retryAfter: http.value(forHTTPHeaderField: "Retry-After"), limits: limits)
        let field = UploadSwitch.parse(http.value(forHTTPHeaderField: "X-Faultline-Log-Upload"))
            ?? data.flatMap { try? JSONValue.parse($0) }.flatMap { UploadSwitch.parse($0["log_upload"]?.stringValue) }
        return ArchiveAnswer(outcome: outcome, logUpload: field)
    }
}
