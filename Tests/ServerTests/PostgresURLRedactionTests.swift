// What the banner and connection errors show of a database URL: no password libpq would read,
// wherever in the URL or connection string it is given.
import XCTest
import FaultlineServer

final class PostgresURLRedactionTests: XCTestCase {
    func testEveryPasswordLibpqReadsIsMasked() {
        let cases: [(given: String, shown: String)] = [
            ("postgres://u:SECRET@db.example:5432/faultline", "postgres://u:***@db.example:5432/faultline"),
            ("postgres://u@db.example/faultline?password=SECRET", "postgres://u@db.example/faultline?password=***"),
            ("postgresql://u@h/db?sslmode=require&PASSWORD=SECRET&connect_timeout=5", "postgresql://u@h/db?sslmode=require&PASSWORD=***&connect_timeout=5"),
            ("postgres://u@h/db?pass%77ord=SECRET", "postgres://u@h/db?password=***"),
            ("postgres://u:a@h/db?password=SECRET", "postgres://u:***@h/db?password=***"),
            ("host=db.example user=u password=SECRET dbname=faultline", "host=db.example user=u password=*** dbname=faultline"),
            ("host=h password = 'SE CRET\\'s' dbname=x", "host=h password = *** dbname=x")
        ]
        for (given, shown) in cases {
            let r = PostgresURL.redacted(given)
            XCTAssertEqual(r, shown, given)
            XCTAssertFalse(r.contains("SECRET") || r.contains("CRET"), given)
        }
    }

    func testAURLWithoutAPasswordIsShownAsGiven() {
        XCTAssertEqual(PostgresURL.redacted("postgres://u@h:5432/db?sslmode=require"), "postgres://u@h:5432/db?sslmode=require")
    }
}
