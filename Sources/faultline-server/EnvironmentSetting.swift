// Reading a `faultline serve` setting from the environment with the same rule as its flag.
import Foundation

/// An environment variable that stands for a flag. Unset or empty: not given. A value the flag
/// would refuse is refused too (a usage error naming the variable), never skipped: a skipped
/// `FAULTLINE_RETENTION_DAYS=90d` would leave a server running with no retention at all.
struct EnvironmentSetting {
    let name: String
    let flag: String

    struct Malformed: Error, CustomStringConvertible {
        let name: String
        let flag: String
        let value: String
        var description: String { "\(name)='\(value)' is not a valid value (it takes what \(flag) takes)" }
    }

    func value<T>(in environment: [String: String], _ parse: (String) -> T?) throws(Malformed) -> T? {
        guard let raw = environment[name], !raw.isEmpty else { return nil }
        guard let parsed = parse(raw) else { throw Malformed(name: name, flag: flag, value: raw) }
        return parsed
    }
}
