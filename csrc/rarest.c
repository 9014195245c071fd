/*
** FTS5 auxiliary function cjk_rarest_phrase(tbl, cap).
**
** The number of rows that hold the query's rarest phrase, counted up to
** cap + 1: a result above cap says only "more than cap".  When every phrase
** is required (one phrase, an AND of phrases, a NEAR group) no row matches
** the query without holding each of them, so this bounds the query's
** matches.  A search that learns a term has at most `limit` matches can
** rank them and build their snippets in one pass over the index, instead of
** ranking a tier first and reading the best rows in a second pass.
**
** The count is the same for every row of a statement: it is made on the
** first call (one short walk per phrase, stopped past cap) and kept, with
** its cap, as the function's auxiliary data for the rest.
*/
#include "internal.h"
SQLITE_EXTENSION_INIT3

/* Largest cap: cap + 1 must not overflow. */
#define RAREST_MAX_CAP (((sqlite3_int64)1) << 62)

typedef struct PhraseRows {
  sqlite3_int64 nRow; /* rows seen so far */
  sqlite3_int64 nCap; /* stop once nRow passes this */
} PhraseRows;

static int countPhraseRow(const Fts5ExtensionApi *pApi, Fts5Context *pFts, void *pCtx) {
  PhraseRows *p = (PhraseRows *)pCtx;
  (void)pApi;
  (void)pFts;
  p->nRow++;
  return p->nRow > p->nCap ? SQLITE_DONE : SQLITE_OK; /* DONE ends the walk cleanly */
}

/* The rarest phrase's row count, capped at nCap + 1, into *pnOut. */
static int rarestPhraseRows(const Fts5ExtensionApi *pApi, Fts5Context *pFts, sqlite3_int64 nCap,
                            sqlite3_int64 *pnOut) {
  int nPhrase = pApi->xPhraseCount(pFts);
  sqlite3_int64 nBest = nCap + 1;
  int i;

  for (i = 0; i < nPhrase && nBest > 0; i++) {
    /* Never walk further than the rarest phrase found so far. */
    PhraseRows count = {0, nBest - 1};
    int rc = pApi->xQueryPhrase(pFts, i, (void *)&count, countPhraseRow);
    if (rc != SQLITE_OK) return rc;
    if (count.nRow < nBest) nBest = count.nRow;
  }
  *pnOut = nBest;
  return SQLITE_OK;
}

/* A count made on this statement's cursor, and the cap it was made with. */
typedef struct KeptCount {
  sqlite3_int64 nCap;
  sqlite3_int64 nRows;
} KeptCount;

/* cjk_rarest_phrase(tbl, cap) */
void hermes_cjk_rarest_phrase(const Fts5ExtensionApi *pApi, Fts5Context *pFts,
                              sqlite3_context *ctx, int nVal, sqlite3_value **apVal) {
  KeptCount *pKept;
  sqlite3_int64 nCap;
  sqlite3_int64 nRows = 0;
  int rc;

  if (nVal != 1) {
    sqlite3_result_error(ctx,
                         "wrong number of arguments to function cjk_rarest_phrase(): "
                         "expected 2 (table, cap)",
                         -1);
    return;
  }
  if (sqlite3_value_type(apVal[0]) != SQLITE_INTEGER || sqlite3_value_int64(apVal[0]) < 0 ||
      sqlite3_value_int64(apVal[0]) > RAREST_MAX_CAP) {
    sqlite3_result_error(ctx, "cjk_rarest_phrase(): cap must be an integer from 0 to 2^62", -1);
    return;
  }
  nCap = sqlite3_value_int64(apVal[0]);
  pKept = (KeptCount *)pApi->xGetAuxdata(pFts, 0);
  if (pKept != NULL && pKept->nCap == nCap) {
    sqlite3_result_int64(ctx, pKept->nRows);
    return;
  }
  rc = rarestPhraseRows(pApi, pFts, nCap, &nRows);
  if (rc != SQLITE_OK) {
    sqlite3_result_error_code(ctx, rc);
    return;
  }
  pKept = (KeptCount *)sqlite3_malloc64(sizeof(*pKept));
  if (pKept == NULL) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  pKept->nCap = nCap;
  pKept->nRows = nRows;
  /* Replaces (and frees) a count kept for another cap; frees pKept on failure. */
  rc = pApi->xSetAuxdata(pFts, (void *)pKept, sqlite3_free);
  if (rc != SQLITE_OK) {
    sqlite3_result_error_code(ctx, rc);
    return;
  }
  sqlite3_result_int64(ctx, nRows);
}
