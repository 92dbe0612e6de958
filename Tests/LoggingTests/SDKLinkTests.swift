// What an app that links the SDK loads: the SDK sends through libcurl itself, so FoundationNetworking
// (its library's load is resident memory and start-up time) comes only with FaultlineURLSession,
// the opt-in trace propagation into the app's own URLSession.
import FaultlineTestSupport
import Foundation
import XCTest

final class SDKLinkTests: XCTestCase {
    /// The Swift module FoundationNetworking, as its symbols are mangled.
    static let networkingSymbol = "20FoundationNetworking"

    /// faultline-log-probe links Faultline (crash capture, logging, the transport) and not
    /// FaultlineURLSession; faultline-crasher links both.
    func testAnAppLinkingTheSDKLinksNoFoundationNetworkingUnlessItOptsIntoURLSessionPropagation() throws {
        let app = TestSupport.product("faultline-log-probe")
        let libraries = try TestSupport.shell("ldd '\(app)'")
        XCTAssertFalse(
            libraries.contains("libFoundationNetworking"),
            "an app linking only Faultline loads FoundationNetworking: a module of the SDK imports it\n\(libraries)")
        // A static build lists no libraries: its symbol table still names what was linked in.
        let symbols = try TestSupport.shell("nm '\(app)'")
        XCTAssertTrue(symbols.contains("9Faultline"), "nm listed no symbols of the SDK in \(app)")
        XCTAssertFalse(symbols.contains(Self.networkingSymbol), "FoundationNetworking's code is linked into \(app)")
        // The SDK's own transport is there.
        XCTAssertTrue(libraries.contains("libcurl") || symbols.contains("curl_multi_poll"), libraries)

        // The same checks see FoundationNetworking where an app asked for it.
        let opted = TestSupport.product("faultline-crasher")
        let optedLibraries = try TestSupport.shell("ldd '\(opted)'")
        let optedSymbols = try TestSupport.shell("nm '\(opted)'")
        XCTAssertTrue(optedLibraries.contains("libFoundationNetworking") || optedSymbols.contains(Self.networkingSymbol), optedLibraries)
    }
}
