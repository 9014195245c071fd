/*
** Entry points of the cjk_unicode61 SQLite loadable extension.
**
** Exactly four symbols are exported:
**   sqlite3_cjkunicode_init  - the name SQLite derives from the file name
**                              "cjk_unicode61.so"; strict: errors surface.
**   sqlite3_ftscjk_init,
**   sqlite3_fts5_cjk_init    - aliases, so this library also serves where
**                              Hermes Agent loads libfts5_cjk.so
**                              (HERMES_FTS5_CJK_SO).
**   hermes_fts_auto_init     - lenient, for sqlite3_auto_extension(): it must
**                              never make a connection fail.
**
** Only the FTS5 v1 extension API is used (fts5_api from "SELECT fts5(?1)"),
** so the library runs on SQLite 3.34+ including Debian bookworm's 3.40.1.
*/
#include "internal.h"
#include "variants.h"
SQLITE_EXTENSION_INIT1

/* Fetch the connection's fts5_api; NULL (with SQLITE_ERROR) when the SQLite
** build has no FTS5, i.e. the fts5() SQL function does not exist. */
static int getFts5Api(sqlite3 *db, fts5_api **ppApi) {
  sqlite3_stmt *pStmt = NULL;
  int rc;

  *ppApi = NULL;
  rc = sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &pStmt, NULL);
  if (rc != SQLITE_OK) return rc;
  rc = sqlite3_bind_pointer(pStmt, 1, (void *)ppApi, "fts5_api_ptr", NULL);
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(pStmt);
    rc = (rc == SQLITE_ROW || rc == SQLITE_DONE) ? SQLITE_OK : rc;
  }
  {
    int rc2 = sqlite3_finalize(pStmt);
    if (rc == SQLITE_OK) rc = rc2;
  }
  if (rc == SQLITE_OK && *ppApi == NULL) rc = SQLITE_ERROR;
  return rc;
}

static void setError(char **pzErrMsg, const char *zMsg, int rc) {
  if (pzErrMsg == NULL) return;
  *pzErrMsg = sqlite3_mprintf("cjk_unicode61: %s (%s)", zMsg, sqlite3_errstr(rc));
}

/* Register everything on db; the work shared by all entry points. */
static int registerAll(sqlite3 *db, char **pzErrMsg) {
  fts5_api *pFts5 = NULL;
  int rc;

  if (getFts5Api(db, &pFts5) != SQLITE_OK) {
    if (pzErrMsg) {
      *pzErrMsg = sqlite3_mprintf("cjk_unicode61: FTS5 is not available in this SQLite build");
    }
    return SQLITE_ERROR;
  }
  rc = hermes_register_tokenizer(pFts5);
  if (rc != SQLITE_OK) {
    setError(pzErrMsg, "cannot register the cjk_unicode61 tokenizer", rc);
    return rc;
  }
  rc = hermes_register_aux(pFts5);
  if (rc != SQLITE_OK) {
    setError(pzErrMsg, "cannot register cjk_highlight/cjk_snippet", rc);
    return rc;
  }
  rc = hermes_register_sql_functions(db, pFts5);
  if (rc != SQLITE_OK) {
    setError(pzErrMsg, "cannot register cjk_tokens/cjk_unicode61_version", rc);
    return rc;
  }
  rc = hermes_register_variants(db);
  if (rc != SQLITE_OK) {
    setError(pzErrMsg, "cannot register cjk_fold", rc);
    return rc;
  }
  return SQLITE_OK;
}

HERMES_EXPORT int sqlite3_cjkunicode_init(sqlite3 *db, char **pzErrMsg,
                                          const sqlite3_api_routines *pApi) {
  SQLITE_EXTENSION_INIT2(pApi);
  return registerAll(db, pzErrMsg);
}

/* The names SQLite derives from libfts5_cjk.so, the file Hermes Agent loads
** through HERMES_FTS5_CJK_SO: the same library serves it under that name. */
HERMES_EXPORT int sqlite3_ftscjk_init(sqlite3 *db, char **pzErrMsg,
                                      const sqlite3_api_routines *pApi) {
  return sqlite3_cjkunicode_init(db, pzErrMsg, pApi);
}

HERMES_EXPORT int sqlite3_fts5_cjk_init(sqlite3 *db, char **pzErrMsg,
                                        const sqlite3_api_routines *pApi) {
  return sqlite3_cjkunicode_init(db, pzErrMsg, pApi);
}

/*
** Lenient init for sqlite3_auto_extension(): runs for every new connection
** of the process, so it registers what it can and always returns SQLITE_OK.
** When called without an API table (a probe, or a host that passes NULL) it
** returns before touching anything, because sqlite3_api would be unusable.
*/
HERMES_EXPORT int hermes_fts_auto_init(sqlite3 *db, char **pzErrMsg,
                                       const sqlite3_api_routines *pApi) {
  char *zErr = NULL;
  if (pApi == NULL || db == NULL) return SQLITE_OK;
  SQLITE_EXTENSION_INIT2(pApi);
  (void)pzErrMsg; /* never surface an error: connections must keep opening */
  (void)registerAll(db, &zErr);
  sqlite3_free(zErr);
  return SQLITE_OK;
}
