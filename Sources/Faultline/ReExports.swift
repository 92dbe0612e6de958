// Types of the SDK's API that live in libraries the CLI shares (so `faultline` never links the
// SDK's interposers): re-exported one by one, so `import Faultline` keeps naming them.
@_exported import class FaultlineCrashPickup.Outbox
@_exported import enum FaultlineCrashPickup.DropReason
@_exported import struct FaultlineCrashPickup.Loss
@_exported import struct FaultlineCrashPickup.CrashPickup
@_exported import enum FaultlineProtocol.LogLevel
@_exported import enum FaultlineProtocol.LogLineFormat
