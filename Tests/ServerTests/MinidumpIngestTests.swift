// The minidump endpoint and envelope minidumps with dumps the real Crashpad handler wrote at test
// time: Sentry's form fields merged into the event, the dump kept and downloadable (API and page),
// the trust of walked frames shown; truncated and corrupt dumps answered 400 with nothing stored
// on the minidump endpoint, kept with what came with them in an envelope,
// a gzip bomb 413, a stranger 401; and a second walk again of a stored dump changes nothing.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport
import FaultlineSymbolication

final class MinidumpIngestTests: XCTestCase {
    var work: String!
    /// One real dump for the whole class: Crashpad's handler takes a moment to write one.
    nonisolated(unsafe) static var dumpAndProgram: (dump: Data, program: String)?

    override func setUpWithError() throws {
        work = TestSupport.makeTemporaryDirectory("minidump-ingest")
    }
    override func tearDown() { if let work { try? FileManager.default.removeItem(atPath: work) } }

    func realDump() throws -> (dump: Data, program: String) {
        if let d = Self.dumpAndProgram, FileManager.default.fileExists(atPath: d.program) { return d }
        let dir = TestSupport.makeTemporaryDirectory("minidump-fixture")
        let program = try CrashpadFixture.build(in: dir)
        let d = (try CrashpadFixture.dump(of: program, in: dir), program)
        Self.dumpAndProgram = d
        return d
    }

    func upload(_ server: TestServer, _ body: Data, boundary: String, gzip: Bool = false, key: String? = nil) -> RawHTTP.Response {
        var headers = ["Content-Type": "multipart/form-data; boundary=\(boundary)"]
        if gzip { headers["Content-Encoding"] = "gzip" }
        return RawHTTP.send(
            port: server.port, method: "POST", path: "/api/\(server.projectID)/minidump/?sentry_key=\(key ?? server.publicKey)&guid=0f3e",
            headers: headers, body: gzip ? Deflate.gzip(body)! : body)
    }

    func testFormFieldsMergeIntoTheWalkedEventAndTheDumpIsDownloadable() throws {
        let (dump, _) = try realDump()
        let server = try TestServer()
        defer { server.stop() }
        let body = CrashpadFixture.multipart(
            boundary: "b0undary",
            fields: [
                ("sentry", #"{"release":"shop@2.1","tags":{"tier":"gold"},"user":{"id":"install-7"}}"#), ("sentry[tags][region]", "eu-west"),
                ("sentry[environment]", "staging"), ("prod", "shop"), ("ver", "2.1")
            ],
            files: [("upload_file_minidump", "c393.dmp", dump), ("upload_file_log", "app.log", Data("last words\n".utf8))])
        let r = upload(server, body, boundary: "b0undary", gzip: true)
        XCTAssertEqual(r.status, 200, r.text)
        let id = try XCTUnwrap(EnvelopeDecoder.normalisedEventID(r.text), "the answer is the event id as text: \(r.text)")
        try server.waitUntilIdle()

        let stored = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/events/\(id)/")
        let event = try XCTUnwrap(stored["event"])
        XCTAssertEqual(event["release"], "shop@2.1")
        XCTAssertEqual(event["environment"], "staging")
        XCTAssertEqual(event["tags"]?["tier"], "gold")
        XCTAssertEqual(event["tags"]?["region"], "eu-west")
        XCTAssertEqual(event["extra"]?["prod"], "shop")
        XCTAssertEqual(event["extra"]?["ver"], "2.1")
        XCTAssertEqual(event["platform"], "native")
        XCTAssertEqual(event["threads"]?["values"]?.arrayValue?.count, 3, event.jsonString)
        let stack = try XCTUnwrap(event["symbolicated_stack"]?.arrayValue)
        XCTAssertEqual(stack.first?["trust"], "context", "the crashing frame is the thread's own program counter")

        let attachments = try XCTUnwrap(stored["attachments"]?.arrayValue)
        XCTAssertEqual(attachments.compactMap { $0["type"]?.stringValue }.sorted(), ["event.attachment", "event.minidump"])
        let dumpLink = try XCTUnwrap(attachments.first { $0["type"] == "event.minidump" }?["download"]?.stringValue)
        let got = server.get(dumpLink)
        XCTAssertEqual(got.status, 200)
        XCTAssertEqual(got.body, dump, "the dump is kept byte for byte")
        XCTAssertEqual(RawHTTP.send(port: server.port, method: "GET", path: dumpLink).status, 401)

        // The issue page: the dump is linked, the frames carry their trust as a muted label.
        let issue = try XCTUnwrap(try server.getJSON("/api/0/projects/faultline/\(server.projectID)/issues/").arrayValue?.first?["id"]?.stringValue)
        let login = try XCTUnwrap(server.webLogin())
        let page = server.page("/ui/issues/\(issue)", login).text
        XCTAssertTrue(page.contains("c393.dmp"), "the dump is listed with the attachments")
        XCTAssertTrue(page.contains("<span class=\"trust\" title=\"how the stackwalker found this frame\">context</span>"), page)
    }

    func testTruncatedOrCorruptDumpsAre400AndNothingIsStored() throws {
        let (dump, _) = try realDump()
        let server = try TestServer()
        defer { server.stop() }
        var corrupt: [(String, Data)] = [
            ("empty", Data()), ("header only", dump.prefix(32)), ("half", dump.prefix(dump.count / 2)),
            ("not a dump", Data(repeating: 0x41, count: 4096))
        ]
        // The stream directory's offset (header bytes 12..<16) pointed past the end.
        var farDirectory = dump
        farDirectory.replaceSubrange(12..<16, with: [0xF0, 0xFF, 0xFF, 0x7F])
        corrupt.append(("directory past the end", farDirectory))
        // Every stream's offset pointed past the end (entries: type, size, offset; 12 bytes each).
        var farStreams = dump
        let count = Int(dump[8]) | Int(dump[9]) << 8
        let directory = Int(dump[12]) | Int(dump[13]) << 8 | Int(dump[14]) << 16
        for i in 0..<min(count, 64) where directory + i * 12 + 12 <= farStreams.count {
            farStreams.replaceSubrange((directory + i * 12 + 8)..<(directory + i * 12 + 12), with: [0x00, 0x00, 0x00, 0xF0])
        }
        corrupt.append(("streams past the end", farStreams))
        // A well-formed header naming no stream at all: a dump of nothing.
        var noStreams = Data("MDMP".utf8) + Data([0x93, 0xA7, 0, 0, 0, 0, 0, 0, 32, 0, 0, 0])
        noStreams += Data(count: 16)
        corrupt.append(("no streams", noStreams))
        for (what, bytes) in corrupt {
            let body = CrashpadFixture.multipart(boundary: "xx", fields: [("prod", "shop")], files: [("upload_file_minidump", "d.dmp", bytes)])
            let r = upload(server, body, boundary: "xx")
            XCTAssertEqual(r.status, 400, "\(what): \(r.text)")
            XCTAssertTrue(r.text.contains("minidump"), "\(what): the answer says what was wrong: \(r.text)")
        }
        let noDump = CrashpadFixture.multipart(boundary: "xx", fields: [("prod", "shop")], files: [])
        XCTAssertEqual(upload(server, noDump, boundary: "xx").status, 400)
        XCTAssertEqual(upload(server, Data("--xx\r\nnot a form".utf8), boundary: "xx").status, 400)
        XCTAssertEqual(try server.storedCount(), 0, "nothing half-stored")
        // The server still takes a good dump afterwards; a second dump part is kept beside it.
        let good = CrashpadFixture.multipart(
            boundary: "xx", fields: [], files: [("upload_file_minidump", "d.dmp", dump), ("upload_file_minidump", "second.dmp", dump.prefix(64))])
        let answer = upload(server, good, boundary: "xx")
        XCTAssertEqual(answer.status, 200)
        XCTAssertEqual(try server.storedCount(), 1)
        try server.waitUntilIdle()
        let id = answer.text.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "-", with: "")
        let stored = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/events/\(id)/")
        XCTAssertEqual(Set(stored["attachments"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []), ["d.dmp", "second.dmp"], stored.jsonString)
    }

    /// A walk runs in the request: while one address's dump is in flight its next is 429, and
    /// while the server's slots are all taken any address's is 503 — each with Retry-After, before
    /// anything of it is inflated or stored; a slot given back lets the same upload in.
    func testDumpsInFlightAreBoundedPerAddressAndInAll() throws {
        let (dump, _) = try realDump()
        var limits = IngestLimits()
        limits.maxMinidumpWalks = 3
        let server = try TestServer(limits: limits)
        defer { server.stop() }
        let slots = try XCTUnwrap((server.server.http.handler as? Router)?.ingest.minidumps?.slots)
        let body = CrashpadFixture.multipart(boundary: "xx", fields: [], files: [("upload_file_minidump", "d.dmp", dump)])

        let ours = try slots.take(for: "127.0.0.1")
        let perAddress = upload(server, body, boundary: "xx")
        XCTAssertEqual(perAddress.status, 429, perAddress.text)
        XCTAssertEqual(perAddress.headers["retry-after"] ?? perAddress.headers["Retry-After"], "1", "\(perAddress.headers)")
        ours.release()
        let others = try ["10.0.0.1", "10.0.0.2", "10.0.0.3"].map { try slots.take(for: $0) }
        XCTAssertThrowsError(try slots.take(for: "10.0.0.4"))
        let serverWide = upload(server, body, boundary: "xx")
        XCTAssertEqual(serverWide.status, 503, serverWide.text)
        XCTAssertEqual(try server.storedCount(), 0, "nothing of a refused dump is stored")

        others[0].release()
        others[0].release()  // a second release gives back nothing more
        XCTAssertEqual(upload(server, body, boundary: "xx").status, 200)
        XCTAssertEqual(try server.storedCount(), 1)
        // The upload gave its slot back: one is free beside the two still held, and no more.
        let fourth = try slots.take(for: "10.0.0.4")
        XCTAssertThrowsError(try slots.take(for: "10.0.0.5"))
        for slot in others.dropFirst() + [fourth] { slot.release() }
    }

    func testAGzipBombIs413AndAStrangerIs401() throws {
        let server = try TestServer()
        defer { server.stop() }
        let bomb = RawHTTP.send(
            port: server.port, method: "POST", path: "/api/\(server.projectID)/minidump/?sentry_key=\(server.publicKey)",
            headers: ["Content-Type": "multipart/form-data; boundary=xx", "Content-Encoding": "gzip"], body: GzipBomb.make(inflatedMiB: 64))
        XCTAssertEqual(bomb.status, 413, bomb.text)
        let body = CrashpadFixture.multipart(boundary: "xx", fields: [], files: [("upload_file_minidump", "d.dmp", Data("MDMP".utf8))])
        XCTAssertEqual(upload(server, body, boundary: "xx", key: "0123456789abcdef0123456789abcdef").status, 401)
        XCTAssertEqual(
            RawHTTP.send(port: server.port, method: "POST", path: "/api/\(server.projectID)/minidump/", headers: [:], body: body).status, 401)
        XCTAssertEqual(try server.storedCount(), 0)
    }

    func testAnEnvelopesMinidumpAttachmentBecomesTheEventsStacks() throws {
        let (dump, _) = try realDump()
        let server = try TestServer()
        defer { server.stop() }
        let id = TestEvents.eventID()
        let event: JSONValue = ["event_id": .string(id), "release": "native@3", "level": "fatal", "extra": ["kept": "yes"]]
        let minidump = Envelope.Item(
            type: "attachment", payload: dump, extra: ["filename": "crash.dmp", "attachment_type": "event.minidump"])
        let r = server.sendEnvelope(TestEvents.envelope(event, extraItems: [minidump]))
        XCTAssertEqual(r.status, 200, r.text)
        try server.waitUntilIdle()
        let stored = try XCTUnwrap(try server.getJSON("/api/0/projects/faultline/\(server.projectID)/events/\(id)/")["event"])
        XCTAssertEqual(stored["release"], "native@3")
        XCTAssertEqual(stored["extra"]?["kept"], "yes", "members ingest does not read are kept")
        XCTAssertEqual(stored["threads"]?["values"]?.arrayValue?.count, 3)
        XCTAssertNotNil(stored["exception"]?["values"]?[0]?["stacktrace"], stored.jsonString)

        // A dump cut short (a full disk) in sentry-native's envelope: the event, its session and
        // its other attachment are kept, the event saying why it has no stacks; the dump is kept
        // as its attachment. (Refusing it all lost the crash and its crashed session for good:
        // SDKs do not send a 400 again.)
        var truncated = Envelope.Item(type: "attachment", payload: dump.prefix(200), extra: ["attachment_type": "event.minidump"])
        truncated.header["filename"] = "bad.dmp"
        let log = Envelope.Item(type: "attachment", payload: Data("last words\n".utf8), extra: ["filename": "app.log"])
        let session: JSONValue = ["sid": .string(UUID().uuidString), "init": true, "status": "crashed", "attrs": ["release": "native@3"]]
        let badID = TestEvents.eventID()
        let bad = server.sendEnvelope(
            TestEvents.envelope(
                ["event_id": .string(badID), "release": "native@3", "tags": ["shop": "north"]],
                extraItems: [truncated, log, Envelope.Item(type: "session", payload: session.serialized())]))
        XCTAssertEqual(bad.status, 200, bad.text)
        try server.waitUntilIdle()
        let kept = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/events/\(badID)/")
        XCTAssertEqual(kept["event"]?["release"], "native@3", kept.jsonString)
        XCTAssertEqual(kept["event"]?["level"], "fatal")
        XCTAssertTrue(kept["event"]?["extra"]?["faultline_minidump_error"]?.stringValue?.isEmpty == false, kept.jsonString)
        XCTAssertEqual(kept["event"]?["errors"]?[0]?["name"], "minidump")
        XCTAssertEqual(Set(kept["attachments"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []), ["bad.dmp", "app.log"], kept.jsonString)
        let sessions = server.get("/api/0/projects/faultline/\(server.projectID)/sessions/").json?.arrayValue?.first { $0["release"] == "native@3" }
        XCTAssertEqual(sessions?["crashed"]?.int64Value, 1, "the crashed session counts")
    }

    func testWalkingAStoredDumpAgainTwiceChangesNothingTheSecondTime() throws {
        let (dump, program) = try realDump()
        let server = try TestServer()
        defer { server.stop() }
        let body = CrashpadFixture.multipart(boundary: "xx", fields: [], files: [("upload_file_minidump", "d.dmp", dump)])
        let r = upload(server, body, boundary: "xx")
        XCTAssertEqual(r.status, 200, r.text)
        let id = try XCTUnwrap(EnvelopeDecoder.normalisedEventID(r.text))
        try server.waitUntilIdle()
        // The program with its DWARF and CFI arrives: the dump is walked again and changes.
        let walkedBefore = try XCTUnwrap(try server.server.store.occurrence(projectID: server.projectID, eventID: id))
        XCTAssertEqual(try server.uploadDebugFile(program), "ok")
        try server.waitUntilIdle()
        let first = try XCTUnwrap(try server.server.store.occurrence(projectID: server.projectID, eventID: id))
        XCTAssertNotEqual(try StoredEvent.decode(first.compressedEvent), try StoredEvent.decode(walkedBefore.compressedEvent), "walked again with CFI")
        let issuesBefore = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/issues/")

        // The same build-id's backfill once more: the walk gives the same event, nothing moves.
        let buildID = try ELFSummary.read(path: program).buildID
        let database = try XCTUnwrap(server.server.stores.database)
        XCTAssertEqual(try SQLMinidumpRecords.occurrences(database, referencing: buildID, after: 0, limit: 10), [first.id], "the dump's modules are kept")
        server.server.backfiller.enqueue(buildID)
        try server.waitUntilIdle()
        let second = try XCTUnwrap(try server.server.store.occurrence(projectID: server.projectID, eventID: id))
        XCTAssertEqual(second.compressedEvent, first.compressedEvent, "a repeated walk leaves the stored event as it is")
        XCTAssertEqual(second.issueID, first.issueID)
        XCTAssertEqual(try server.getJSON("/api/0/projects/faultline/\(server.projectID)/issues/"), issuesBefore)
    }

    /// A database of schema 13 (before minidumps) gains the dump modules table at open; a stored
    /// dump's modules go with their occurrence, whichever statement deletes it.
    func testASchema13DatabaseGainsMinidumpModulesDeletedWithTheirOccurrence() throws {
        let path = work + "/faultline.sqlite"
        try SQLiteStore(path: path).close()
        let c = try SQLiteConnection(path: path)
        try c.exec("DROP TRIGGER minidump_modules_with_occurrence; DROP TABLE minidump_modules; PRAGMA user_version=13")
        let store = try SQLiteStore(path: path)
        defer { store.close() }
        var version = 0
        try c.query("PRAGMA user_version") { version = Int($0.int(0)) }
        XCTAssertEqual(version, SQLiteSchema.version)
        let module = try XCTUnwrap(BuildID(hex: "b06fc9af0265d2e0134ae8c21fc7aa99fcd0053c"))
        var e = IncomingEvent(
            projectID: 1, eventID: TestEvents.eventID(), received: 1000, timestamp: 1000, release: nil, installID: nil, compressedEvent: Data("{}".utf8))
        e.minidumpModules = [module]
        let id = try XCTUnwrap(try store.storeIngest(event: e, items: []))
        try store.writer.sync { try $0.exec("UPDATE occurrences SET processed = 1") }
        XCTAssertEqual(try SQLMinidumpRecords.occurrences(store, referencing: module, after: 0, limit: 10), [id])
        try store.writer.sync { try $0.exec("DELETE FROM occurrences") }
        XCTAssertEqual(try SQLMinidumpRecords.occurrences(store, referencing: module, after: 0, limit: 10), [])
        var left = -1
        try c.query("SELECT count(*) FROM minidump_modules") { left = Int($0.int(0)) }
        XCTAssertEqual(left, 0)
    }

    /// The walk again goes in bounded batches, each committed with its resume point: a run stopped
    /// after its first batch has changed exactly that batch, a run resumed after it changes the
    /// rest, and a third run changes nothing.
    func testTheWalkAgainGoesInBatchesAndResumesAfterTheLastOneDone() throws {
        let (dump, program) = try realDump()
        let server = try TestServer()
        defer { server.stop() }
        for _ in 0..<5 {
            let body = CrashpadFixture.multipart(
                boundary: "xx", fields: [("sentry", "{\"event_id\":\"\(TestEvents.eventID())\"}")], files: [("upload_file_minidump", "d.dmp", dump)])
            XCTAssertEqual(upload(server, body, boundary: "xx").status, 200)
        }
        try server.waitUntilIdle()
        // The file arrives with the server's own backfill held off: this test runs the phase itself.
        server.server.backfiller.stop()
        XCTAssertEqual(try server.uploadDebugFile(program), "ok")
        let rewalk = MinidumpRewalk(
            database: try XCTUnwrap(server.server.stores.database), store: server.server.store,
            walker: DebugFileMinidumpWalker(debugFiles: server.server.debugFiles, upstream: nil), batchSize: 2)
        let buildID = try ELFSummary.read(path: program).buildID
        struct Stop: Error {}
        var resumeAt: Int64 = 0
        XCTAssertThrowsError(
            try rewalk.run(buildID: buildID, after: 0, symbolicator: server.server.symbolicator) { last in
                resumeAt = last
                throw Stop()
            })
        let issues = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/issues/").arrayValue ?? []
        XCTAssertEqual(issues.map { $0["count"]?.int64Value ?? 0 }.sorted(), [2, 3], "two walked again, three not yet: \(issues)")
        let resumed = try rewalk.run(buildID: buildID, after: resumeAt, symbolicator: server.server.symbolicator) { _ in }
        XCTAssertEqual(resumed, 3, "the resumed run walks the rest")
        let after = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/issues/").arrayValue ?? []
        XCTAssertEqual(after.map { $0["count"]?.int64Value ?? 0 }, [5], "one issue again, all five in it: \(after)")
        XCTAssertEqual(try rewalk.run(buildID: buildID, after: 0, symbolicator: server.server.symbolicator) { _ in }, 0)
    }

    /// A dump stored before its program's file arrived but not grouped yet (the grouping worker's
    /// queued stack is the walk at ingest) is grouped by the backfill's new walk; the worker then
    /// finds it grouped and counts it once.
    func testADumpNotYetGroupedWhenTheFileArrivesIsGroupedByTheNewWalk() throws {
        let (dump, program) = try realDump()
        let server = try TestServer()
        defer { server.stop() }
        server.server.processor.stop()
        let body = CrashpadFixture.multipart(boundary: "xx", fields: [], files: [("upload_file_minidump", "d.dmp", dump)])
        let r = upload(server, body, boundary: "xx")
        XCTAssertEqual(r.status, 200, r.text)
        let id = try XCTUnwrap(EnvelopeDecoder.normalisedEventID(r.text))
        XCTAssertEqual(try server.server.stores.issueReads.totals().processed, 0)
        XCTAssertEqual(try server.uploadDebugFile(program), "ok")
        let deadline = Date().addingTimeInterval(60)
        while try server.server.stores.issueReads.totals().processed == 0 && Date() < deadline { usleep(20_000) }
        let occurrence = try XCTUnwrap(try server.server.store.occurrence(projectID: server.projectID, eventID: id))
        let issue = try server.getJSON("/api/0/issues/\(try XCTUnwrap(occurrence.issueID))/")
        XCTAssertEqual(issue["count"]?.int64Value, 1)
        let frames = issue["stack"]?.arrayValue ?? []
        XCTAssertTrue(frames.dropFirst().contains { $0["trust"]?.stringValue == "cfi" }, "grouped by the walk with the file: \(issue.jsonString)")
        XCTAssertTrue(frames.contains { ($0["function"]?.stringValue ?? "").contains("nightly_restock") }, issue.jsonString)
    }
}
