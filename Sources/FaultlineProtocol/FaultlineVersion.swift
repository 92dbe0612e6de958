// Faultline's version as reported in events and by the CLI.
import FoundationEssentials

public enum FaultlineVersion {
    public static let string = "0.1.0"
}
