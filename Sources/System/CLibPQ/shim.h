// libpq: the PostgreSQL client library behind PostgresStore (several servers on one database).
#include <libpq-fe.h>
