/*
** Entry points of the cjk_unicode61 SQLite loadable extension, and the one
** table of everything it registers on a connection.
**
** The exported entry points are declared in hermes_fts.h.  Only the FTS5 v1
** extension API is used (fts5_api from "SELECT fts5(?1)"), so the library
** runs on SQLite 3.34+ including Debian bookworm's 3.40.1.
*/
#include "internal.h"
SQLITE_EXTENSION_INIT1

/* Same input -> same output on a connection, and harmless in triggers and
** views, hence DETERMINISTIC | INNOCUOUS for every scalar function. */
#define SCALAR_FLAGS (SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS)

typedef enum RegistrationKind {
  REG_TOKENIZER, /* an FTS5 tokenizer; context = the fts5_api */
  REG_ALIAS,     /* the same tokenizer under a public name another library may own */
  REG_AUX,       /* an FTS5 auxiliary function */
  REG_SCALAR,    /* a scalar SQL function; user data = the fts5_api */
  REG_AGGREGATE  /* an aggregate SQL function: xScalar steps, xFinal ends */
} RegistrationKind;

typedef struct Registration {
  RegistrationKind eKind;
  const char *zName;
  const fts5_tokenizer *pTokenizer;                          /* REG_TOKENIZER */
  fts5_extension_function xAux;                              /* REG_AUX */
  void (*xScalar)(sqlite3_context *, int, sqlite3_value **); /* REG_SCALAR, REG_AGGREGATE */
  int nArg;                                                  /* REG_SCALAR; -1 = any */
  void (*xFinal)(sqlite3_context *);                         /* REG_AGGREGATE */
} Registration;

static void claimPublicName(sqlite3_context *ctx, int argc, sqlite3_value **argv);

/* Registered in this order; the tokenizer first, because the functions find
** it by name on the same connection. */
static const Registration REGISTRATIONS[] = {
    {REG_TOKENIZER, HERMES_TOKENIZER_NAME, &hermes_cjk_tokenizer, NULL, NULL, 0, NULL},
    {REG_ALIAS, HERMES_PUBLIC_TOKENIZER_NAME, &hermes_cjk_tokenizer, NULL, NULL, 0, NULL},
    {REG_AUX, "cjk_highlight", NULL, hermes_cjk_highlight, NULL, 0, NULL},
    {REG_AUX, "cjk_snippet", NULL, hermes_cjk_snippet, NULL, 0, NULL},
    {REG_AUX, "cjk_few_snippet", NULL, hermes_cjk_few_snippet, NULL, 0, NULL},
    {REG_AUX, "hermes_fts_held", NULL, hermes_fts_held, NULL, 0, NULL},
    {REG_AUX, "hermes_fts_bm25", NULL, hermes_fts_bm25, NULL, 0, NULL},
    {REG_AUX, "hermes_fts_saturation", NULL, hermes_fts_saturation, NULL, 0, NULL},
    {REG_AGGREGATE, "hermes_fts_block_peaks", NULL, NULL, hermes_fts_block_peaks_step, 4,
     hermes_fts_block_peaks_final},
    {REG_SCALAR, "cjk_tokens", NULL, NULL, hermes_cjk_tokens, -1, NULL},
    {REG_SCALAR, "cjk_tokens_query", NULL, NULL, hermes_cjk_tokens_query, -1, NULL},
    {REG_SCALAR, "cjk_unicode61_version", NULL, NULL, hermes_cjk_version, 0, NULL},
    {REG_SCALAR, "cjk_fold", NULL, NULL, hermes_cjk_fold, 1, NULL},
    {REG_SCALAR, "cjk_fold_find", NULL, NULL, hermes_cjk_fold_find, 2, NULL},
    {REG_SCALAR, "cjk_unicode61_claim", NULL, NULL, claimPublicName, 0, NULL},
};

/* Fetch the connection's fts5_api; NULL (with SQLITE_ERROR) when the SQLite
** build has no FTS5, i.e. the fts5() SQL function does not exist. */
static int getFts5Api(sqlite3 *db, fts5_api **ppApi) {
  sqlite3_stmt *pStmt = NULL;
  int rc;
  int rc2;

  *ppApi = NULL;
  rc = sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &pStmt, NULL);
  if (rc != SQLITE_OK) return rc;
  rc = sqlite3_bind_pointer(pStmt, 1, (void *)ppApi, "fts5_api_ptr", NULL);
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(pStmt);
    rc = (rc == SQLITE_ROW || rc == SQLITE_DONE) ? SQLITE_OK : rc;
  }
  rc2 = sqlite3_finalize(pStmt);
  if (rc == SQLITE_OK) rc = rc2;
  if (rc == SQLITE_OK && *ppApi == NULL) rc = SQLITE_ERROR;
  return rc;
}

static int tokenizerExists(fts5_api *pFts5, const char *zName) {
  void *pUserData = NULL;
  fts5_tokenizer found;
  return pFts5->xFindTokenizer(pFts5, zName, &pUserData, &found) == SQLITE_OK;
}

static int createTokenizer(fts5_api *pFts5, const Registration *r) {
  /* xCreateTokenizer copies the methods; it takes a non-const pointer. */
  fts5_tokenizer methods = *r->pTokenizer;
  return pFts5->xCreateTokenizer(pFts5, r->zName, (void *)pFts5, &methods, NULL);
}

/* cjk_unicode61_claim(): registers the public name on this connection where
** no library has; 1 when it is ours now, 0 when another library owns it.
** Not DETERMINISTIC in spirit, but harmless: it only ever adds a name. */
static void claimPublicName(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  fts5_api *pFts5 = (fts5_api *)sqlite3_user_data(ctx);
  void *pUserData = NULL;
  fts5_tokenizer found;
  fts5_tokenizer methods = hermes_cjk_tokenizer;
  int rc;
  (void)argc;
  (void)argv;
  if (pFts5->xFindTokenizer(pFts5, HERMES_PUBLIC_TOKENIZER_NAME, &pUserData, &found) ==
      SQLITE_OK) {
    sqlite3_result_int(ctx, found.xTokenize == hermes_cjk_tokenizer.xTokenize);
    return;
  }
  rc = pFts5->xCreateTokenizer(pFts5, HERMES_PUBLIC_TOKENIZER_NAME, (void *)pFts5, &methods,
                               NULL);
  if (rc != SQLITE_OK) {
    sqlite3_result_error_code(ctx, rc);
    return;
  }
  sqlite3_result_int(ctx, 1);
}

static int registerOne(sqlite3 *db, fts5_api *pFts5, const Registration *r) {
  switch (r->eKind) {
    case REG_ALIAS:
      /* Taken already (e.g. Hermes' own libfts5_cjk): left to its owner,
      ** whose tables were written with it. */
      if (tokenizerExists(pFts5, r->zName)) return SQLITE_OK;
      return createTokenizer(pFts5, r);
    case REG_TOKENIZER:
      return createTokenizer(pFts5, r);
    case REG_AUX:
      return pFts5->xCreateFunction(pFts5, r->zName, NULL, r->xAux, NULL);
    case REG_SCALAR:
      return sqlite3_create_function_v2(db, r->zName, r->nArg, SCALAR_FLAGS, (void *)pFts5,
                                        r->xScalar, NULL, NULL, NULL);
    case REG_AGGREGATE:
      return sqlite3_create_function_v2(db, r->zName, r->nArg, SCALAR_FLAGS, NULL, NULL,
                                        r->xScalar, r->xFinal, NULL);
  }
  return SQLITE_INTERNAL;
}

static int isSqlFunction(const Registration *r) {
  return r->eKind == REG_SCALAR || r->eKind == REG_AGGREGATE;
}

/* Whether this library (this version) has registered its SQL functions on db
** already: a second SELECT load_extension() of it.  SQLite refuses to redefine
** a function while a statement runs (SQLITE_BUSY), and that SELECT is one. */
static int loadedAlready(sqlite3 *db) {
  sqlite3_stmt *pStmt = NULL;
  char *zOurs = hermes_version_text();
  int bSame = 0;
  if (zOurs != NULL &&
      sqlite3_prepare_v2(db, "SELECT cjk_unicode61_version()", -1, &pStmt, NULL) == SQLITE_OK &&
      sqlite3_step(pStmt) == SQLITE_ROW) {
    const char *zTheirs = (const char *)sqlite3_column_text(pStmt, 0);
    bSame = zTheirs != NULL && sqlite3_stricmp(zTheirs, zOurs) == 0;
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zOurs);
  return bSame;
}

/* Register everything on db; the work shared by all entry points.  Stops at
** the first failure and returns its code, with a message naming what failed. */
static int registerAll(sqlite3 *db, int bAlias, char **pzErrMsg) {
  fts5_api *pFts5 = NULL;
  size_t i;

  if (getFts5Api(db, &pFts5) != SQLITE_OK) {
    if (pzErrMsg) {
      *pzErrMsg = sqlite3_mprintf("cjk_unicode61: FTS5 is not available in this SQLite build");
    }
    return SQLITE_ERROR;
  }
  for (i = 0; i < sizeof(REGISTRATIONS) / sizeof(REGISTRATIONS[0]); i++) {
    int rc;
    if (REGISTRATIONS[i].eKind == REG_ALIAS && !bAlias) continue;
    rc = registerOne(db, pFts5, &REGISTRATIONS[i]);
    if (rc == SQLITE_BUSY && isSqlFunction(&REGISTRATIONS[i])) {
      if (loadedAlready(db)) continue; /* ours already: SQLite keeps it */
      /* SQLITE_BUSY's own words ("database is locked") name no cause here. */
      if (pzErrMsg) {
        *pzErrMsg = sqlite3_mprintf(
            "cjk_unicode61: cannot register %s: another build of the library has it on this "
            "connection, and SQLite redefines no function while a statement runs; load this "
            "build into a new connection",
            REGISTRATIONS[i].zName);
      }
      return rc;
    }
    if (rc != SQLITE_OK) {
      if (pzErrMsg) {
        *pzErrMsg = sqlite3_mprintf("cjk_unicode61: cannot register %s (%s)",
                                    REGISTRATIONS[i].zName, sqlite3_errstr(rc));
      }
      return rc;
    }
  }
  return SQLITE_OK;
}

int sqlite3_cjkunicode_init(sqlite3 *db, char **pzErrMsg, const sqlite3_api_routines *pApi) {
  SQLITE_EXTENSION_INIT2(pApi);
  return registerAll(db, 1, pzErrMsg);
}

int sqlite3_ftscjk_init(sqlite3 *db, char **pzErrMsg, const sqlite3_api_routines *pApi) {
  return sqlite3_cjkunicode_init(db, pzErrMsg, pApi);
}

int sqlite3_fts5_cjk_init(sqlite3 *db, char **pzErrMsg, const sqlite3_api_routines *pApi) {
  return sqlite3_cjkunicode_init(db, pzErrMsg, pApi);
}

/*
** Runs for every new connection of the process, so it registers what it can
** and always returns SQLITE_OK.  Those include the host's own (Hermes Agent
** with our plugin), whose tables may use another library's cjk_unicode61, so
** the public alias is not registered here.  When called without an API table (a probe,
** or a host that passes NULL) it returns before touching anything, because
** sqlite3_api would be unusable.
*/
int hermes_fts_auto_init(sqlite3 *db, char **pzErrMsg, const sqlite3_api_routines *pApi) {
  char *zErr = NULL;
  if (pApi == NULL || db == NULL) return SQLITE_OK;
  SQLITE_EXTENSION_INIT2(pApi);
  (void)pzErrMsg; /* never surface an error: connections must keep opening */
  (void)registerAll(db, 0, &zErr);
  sqlite3_free(zErr);
  return SQLITE_OK;
}
