// Faultline's version as reported in events and by the CLI.
import Foundation

public enum FaultlineVersion {
    public static let string = "0.1.0"
}
