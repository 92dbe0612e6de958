// The shared mode of a claim, as every store must show it: any number of sharing holders at once
// (every node's grouping), none beside an exclusive holder (a backfill), and an exclusive claimant
// that found shares keeps the claim while they drain, so no new share starves it.
@testable import FaultlineServer
import FaultlineTestSupport
import Foundation
import XCTest

extension StoreConformance {
    static func sharedClaims(_ store: CoreStoreUnderTest) throws {
        XCTAssertTrue(try store.acquireSharedClaim("s", holder: "g1", duration: 60))
        XCTAssertTrue(try store.acquireSharedClaim("s", holder: "g2", duration: 60), "shares do not exclude each other")
        XCTAssertFalse(try store.acquireClaim("s", holder: "b", duration: 60), "not exclusive while shares are held")
        XCTAssertFalse(try store.acquireSharedClaim("s", holder: "g3", duration: 60), "a waiting exclusive claimant stops new shares")
        XCTAssertTrue(try store.renewClaim(ClaimShare.rowName(claim: "s", holder: "g1"), holder: "g1", duration: 60), "a share is renewed")
        try store.releaseClaim(ClaimShare.rowName(claim: "s", holder: "g1"), holder: "g1")
        XCTAssertFalse(try store.acquireClaim("s", holder: "b", duration: 60), "one share is still held")
        try store.releaseClaim(ClaimShare.rowName(claim: "s", holder: "g2"), holder: "g2")
        XCTAssertTrue(try store.acquireClaim("s", holder: "b", duration: 60), "exclusive once every share is released")
        XCTAssertFalse(try store.acquireSharedClaim("s", holder: "g1", duration: 60), "no share beside the exclusive holder")
        XCTAssertTrue(try store.acquireClaim("other", holder: "c", duration: 60), "shares are per claim name")
        try store.releaseClaim("other", holder: "c")
        try store.releaseClaim("s", holder: "b")
        XCTAssertTrue(try store.acquireSharedClaim("s", holder: "g1", duration: 60), "shared again after the release")
        try store.releaseClaim(ClaimShare.rowName(claim: "s", holder: "g1"), holder: "g1")

        // A share whose holder died (no renewal) stops counting when it expires, and cannot be
        // renewed once an exclusive holder has taken the claim past it.
        XCTAssertTrue(try store.acquireSharedClaim("s", holder: "dead", duration: 0.2))
        XCTAssertFalse(try store.acquireClaim("s", holder: "b", duration: 60))
        Thread.sleep(forTimeInterval: 0.4)
        XCTAssertTrue(try store.acquireClaim("s", holder: "b", duration: 60), "an expired share does not hold the claim")
        XCTAssertFalse(
            try store.renewClaim(ClaimShare.rowName(claim: "s", holder: "dead"), holder: "dead", duration: 60), "the expired share is gone")
        try store.releaseClaim("s", holder: "b")

        // StoreClaim: two sharing claimants hold at once; an exclusive one waits for both, and a
        // sharing claimant that asks meanwhile waits for the exclusive one.
        let g1 = StoreClaim(store: store, name: "w", mode: .shared, role: "g1")
        let g2 = StoreClaim(store: store, name: "w", mode: .shared, role: "g2")
        let backfill = StoreClaim(store: store, name: "w", role: "backfill")
        try g1.acquire()
        try g2.acquire()
        XCTAssertNoThrow(try g1.check())
        XCTAssertNoThrow(try g2.check())
        let exclusive = DispatchSemaphore(value: 0)
        Thread {
            try? backfill.acquire(); exclusive.signal()
        }.start()
        XCTAssertEqual(exclusive.wait(timeout: .now() + 0.3), .timedOut, "the exclusive claimant waits for the shares")
        g1.release()
        XCTAssertEqual(exclusive.wait(timeout: .now() + 0.3), .timedOut, "and for the last of them")
        let shared = DispatchSemaphore(value: 0)
        Thread {
            try? g1.acquire(); shared.signal()
        }.start()
        g2.release()
        XCTAssertEqual(exclusive.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(shared.wait(timeout: .now() + 0.3), .timedOut, "a share waits while the exclusive claimant holds")
        backfill.release()
        XCTAssertEqual(shared.wait(timeout: .now() + 10), .success)
        g1.release()
    }
}
