// Two issues on a test server — `alpha_crash` and `beta_crash`, `betaOccurrences` of the latter —
// and a web login: what the issue page's tests start from.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineTestSupport

struct TwoIssues {
    let alpha: IssueRecord
    let beta: IssueRecord
    let login: WebLogin

    /// Ingests one alpha crash (with `alphaEventID` when given) and `betaOccurrences` beta crashes,
    /// waits for grouping and logs in.
    init(on server: TestServer, alphaEventID: String? = nil, betaOccurrences: Int = 1) throws {
        server.ingest(TestEvents.native(eventID: alphaEventID ?? TestEvents.eventID(), offsets: [0x100], functions: ["alpha_crash"]))
        for _ in 0..<betaOccurrences { server.ingest(TestEvents.native(offsets: [0x200], functions: ["beta_crash"])) }
        try server.waitUntilIdle()
        login = try XCTUnwrap(server.webLogin())
        let issues = try server.server.stores.issueReads.issues(projectID: server.projectID, limit: 10, offset: 0)
        alpha = try XCTUnwrap(issues.first { $0.title.contains("alpha_crash") })
        beta = try XCTUnwrap(issues.first { $0.title.contains("beta_crash") })
    }
}
