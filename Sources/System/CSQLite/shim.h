// SQLite: the server's embedded store.
#include <sqlite3.h>
