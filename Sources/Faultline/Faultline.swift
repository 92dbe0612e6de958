// SDK entry point.
import CFaultlineCrash
import FaultlineProtocol
