// libFuzzer target: multipart/form-data parsing of chunk uploads. The first line is the boundary.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMultipart(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(bytes: data, count: size)
    let nl = bytes.firstIndex(of: 0x0A) ?? bytes.endIndex
    let boundary = String(decoding: bytes[..<nl], as: UTF8.self)
    let body = nl < bytes.endIndex ? bytes[(nl + 1)...] : Data()
    if let parts = try? Multipart.parse(Data(body), contentType: "multipart/form-data; boundary=\(boundary)", maxParts: 64) {
        precondition(parts.count <= 64, "part cap not enforced")
        precondition(parts.reduce(0) { $0 + $1.body.count } <= body.count, "parts larger than the body")
    }
    return 0
}
