// libFuzzer target: the minidump endpoint's decoding of an upload (multipart with the boundary
// `fz`, Sentry's `sentry` / `sentry[…]` form fields, annotations, file parts) and the merge of
// the described event with a walked dump's. The first byte chooses gzip of the rest (odd) or not.
import Foundation
import FaultlineProtocol

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMinidumpUpload(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    var body = Data(bytes: data + 1, count: size - 1)
    var headers = ["Content-Type": "multipart/form-data; boundary=fz"]
    if data[0] & 1 == 1 {
        body = Deflate.gzip(body) ?? body
        headers["Content-Encoding"] = "gzip"
    }
    var limits = IngestLimits()
    limits.maxMinidumpBytes = 1024 * 1024
    limits.maxKeptBytes = 1024 * 1024
    let request = HTTPRequest(method: "POST", path: "/api/1/minidump/", headers: headers, body: body)
    guard let submission = try? MinidumpUpload.submission(of: request, limits: limits) else { return 0 }
    precondition(submission.attachments.first?.header["attachment_type"]?.stringValue == MinidumpUpload.attachmentType, "the dump comes first")
    precondition(submission.attachments.count <= limits.maxMinidumpUploadParts, "part cap not enforced")
    let event = submission.event ?? .object([:])
    precondition(event.serialized().count <= limits.maxEventBytes, "the form fields' event is over its cap")
    let walked: JSONValue = [
        "exception": ["values": [["type": "SIGSEGV", "stacktrace": ["frames": [["instruction_addr": "0x1000", "trust": "context"]]]]]],
        "threads": ["values": [["id": 1, "crashed": true]]], "tags": ["signal": "SIGSEGV"], "extra": ["unwind_stopped_by": "end of stack"],
        "contexts": ["os": ["name": "Linux"]]
    ]
    let merged = MinidumpEventMerge.merge(base: event, walked: walked)
    precondition(merged["exception"] == walked["exception"], "the walk's stacks replace the client's")
    precondition((try? JSONValue.parse(merged.serialized())) != nil, "the merged event does not read back")
    return 0
}
