// libFuzzer target: the MessagePack reader over what sentry-native attaches to a minidump upload,
// and the merge of those attachments into an event. The first byte chooses which attachment the
// rest is (event, either breadcrumb file); whatever decodes must serialise as JSON and merge
// without growing the breadcrumbs past the longer list.
import Foundation
import FaultlineProtocol

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMessagePack(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let body = Data(bytes: data + 1, count: size - 1)
    if let values = try? MessagePack.values(body) { for v in values { _ = v.serialized() } }
    let name = [SentryNativeAttachments.eventName, SentryNativeAttachments.breadcrumbNames[0], SentryNativeAttachments.breadcrumbNames[1]][
        Int(data[0]) % 3]
    var event: JSONValue = ["release": "app@1", "breadcrumbs": [["timestamp": 1_700_000_000, "message": "earlier"]]]
    let kept = SentryNativeAttachments.merge([MultipartPart(name: name, filename: name, contentType: nil, body: body)], into: &event)
    precondition(kept.count <= 1, "one part in, at most one kept")
    if kept.isEmpty, name != SentryNativeAttachments.eventName, let crumbs = event["breadcrumbs"]?.arrayValue {
        let decoded = (try? MessagePack.values(body))?.count ?? 0
        precondition(crumbs.count <= max(1, decoded), "breadcrumbs cut to the longer list")
    }
    _ = event.serialized()
    return 0
}
