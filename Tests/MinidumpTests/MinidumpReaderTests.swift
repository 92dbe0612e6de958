// The minidump reader over dumps Crashpad's own handler writes at test time.
import FaultlineMinidump
import FaultlineProtocol
import FaultlineTestSupport
import XCTest
