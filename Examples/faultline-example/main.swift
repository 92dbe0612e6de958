// A complete program using the Faultline SDK (README's example):
//   swift run faultline-example http://<public key>@127.0.0.1:8411/1
import Faultline
import Foundation

struct PaymentDeclined: Error, CustomStringConvertible {
    let code: Int
    var description: String { "payment declined with code \(code)" }
}

func charge(cents: Int) throws {
    Log.info("charging card", attributes: ["cents": .int(cents), "currency": "EUR"])
    if cents > 10_000 { throw PaymentDeclined(code: 51) }
}

let dsn = CommandLine.arguments.dropFirst().first
let started = Faultline.start(
    Options(
        dsn: dsn, release: "example@1.0.0", environment: "demo",
        service: "checkout", appID: "dev.faultline.example"))
for w in started.warnings { print("faultline:", w) }

Log.info("checkout started", attributes: ["items": 3, "express": true])
do {
    try charge(cents: 12_500)
} catch {
    Log.error("checkout failed", attributes: ["reason": .string(String(describing: error))])
    let id = Faultline.capture(error, attributes: ["order": "A-1042"])
    print("captured error event", id ?? "(SDK off)")
}
// A normal exit flushes the queue and ends the session as "exited"; a crash would be reported
// on the next launch instead.
