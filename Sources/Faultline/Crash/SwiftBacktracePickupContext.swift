// What this launch tells the crash events it makes from Swift backtracer logs.
import FaultlineProtocol

/// What this launch knows that the crashed run most likely shared: release, environment,
/// service, app id and install. Not the session: the log does not say which one crashed.
func pickupContext(_ o: Options, installID: String) -> JSONValue {
    var c: [String: JSONValue] = ["install_id": .string(installID)]
    if let r = o.release { c["release"] = .string(r) }
    if let e = o.environment { c["environment"] = .string(e) }
    if let s = o.service { c["service"] = .string(s) }
    if let a = o.appID { c["app_id"] = .string(a) }
    return .object(c)
}
