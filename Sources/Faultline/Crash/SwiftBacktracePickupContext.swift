// What this launch tells the crash events it makes from Swift backtracer logs.
import FaultlineProtocol

/// What this launch knows that the crashed run most likely shared: release, environment,
/// service, app id and install. Not the session: the log does not say which one crashed.
func pickupContext(_ o: Options, installID: String) -> CrashContext {
    var c = CrashContext()
    c.installID = installID
    c.release = o.release
    c.environment = o.environment
    c.service = o.service
    c.appID = o.appID
    return c
}
