/*
** FTS5 auxiliary function
**
**   cjk_few_snippet(tbl, score, n, col, open, close, ellipsis, max_chars)
**
** cjk_snippet(tbl, col, open, close, ellipsis, max_chars) of the row when
** the query is one phrase held by at most n rows; NULL otherwise.  `score`
** is the row's `rank` (bm25 with FTS5's defaults).
**
** Why: a search ranks a tier of matches from the index alone and builds
** snippets for the best rows afterwards, in a second MATCH.  When a term is
** rare, every match is on the page, and that second MATCH only repeats the
** phrase walk.  bm25 already counted the phrase's rows for its IDF, but
** FTS5 keeps that count to itself; the row's score gives it back:
**
**   score = -idf * tf(freq, doclen),  idf = ln((N - hits + 0.5) / (hits + 0.5))
**
** tf is computed here from the row, so idf = -score / tf, and "hits <= n"
** is "idf above the midpoint of the IDFs of n and n + 1 hits" (idf falls as
** hits grow).  The judgement is made on a cursor's first row, with that
** row's n, and kept for the others.  It only decides where a snippet is
** built: a wrong one (a rank configured with other weights) costs time,
** never a different result.  The caller learns from the number of rows
** whether they are every match, and builds any snippet still missing the
** usual way.
*/
#include <string.h>

#include "internal.h"
SQLITE_EXTENSION_INIT3

/* FTS5's bm25 defaults. */
#define BM25_K1 1.2
#define BM25_B 0.75
#define LN2 0.69314718055994530942

/* Natural logarithm of x > 0, to about 1e-15: the library calls no libm.
** x = m * 2^e with m in [1, 2), and ln m = 2 atanh(z), z = (m-1)/(m+1) <= 1/3. */
static double naturalLog(double x) {
  double z, z2, term, sum = 0.0;
  int e = 0;
  int k;
  while (x >= 2.0) {
    x *= 0.5;
    e++;
  }
  while (x < 1.0) {
    x *= 2.0;
    e--;
  }
  z = (x - 1.0) / (x + 1.0);
  z2 = z * z;
  term = z;
  for (k = 1; k <= 41; k += 2) { /* z^43 / 43 < 1e-21 */
    sum += term / k;
    term *= z2;
  }
  return 2.0 * sum + e * LN2;
}

/* bm25's IDF of a phrase in nHit of nRow rows, before FTS5 floors it. */
static double idfOf(sqlite3_int64 nRow, sqlite3_int64 nHit) {
  return naturalLog(((double)(nRow - nHit) + 0.5) / ((double)nHit + 0.5));
}

/* Whether the query is one phrase held by at most nMax rows, judged from
** this row's bm25 score. */
static int fewRows(const Fts5ExtensionApi *pApi, Fts5Context *pFts, double score,
                   sqlite3_int64 nMax, int *pbFew) {
  sqlite3_int64 nRow = 0;
  sqlite3_int64 nToken = 0;
  int nInst = 0;
  int nTok = 0;
  double avgdl, freq, tf, cut;
  int rc;

  *pbFew = 0;
  if (pApi->xPhraseCount(pFts) != 1 || nMax < 0) return SQLITE_OK;
  rc = pApi->xRowCount(pFts, &nRow);
  if (rc == SQLITE_OK) rc = pApi->xColumnTotalSize(pFts, -1, &nToken);
  if (rc == SQLITE_OK) rc = pApi->xInstCount(pFts, &nInst);
  if (rc == SQLITE_OK) rc = pApi->xColumnSize(pFts, -1, &nTok);
  if (rc != SQLITE_OK) return rc;
  if (nMax >= nRow) { /* no query has more rows than the table */
    *pbFew = 1;
    return SQLITE_OK;
  }
  if (nToken <= 0 || nInst <= 0 || !(score < 0.0)) return SQLITE_OK;
  /* The IDF of nMax hits and of nMax + 1 lie on either side of this cut, so
  ** rounding in either one cannot move the judgement across it.  A phrase in
  ** half of the rows or more gets FTS5's floor of 1e-6 whatever its count:
  ** where the cut is that low, the score says nothing. */
  cut = (idfOf(nRow, nMax) + idfOf(nRow, nMax + 1)) / 2.0;
  if (!(cut > 1e-6)) return SQLITE_OK;
  avgdl = (double)nToken / (double)nRow;
  freq = (double)nInst; /* one phrase: every instance is its own */
  tf = (freq * (BM25_K1 + 1.0)) / (freq + BM25_K1 * (1.0 - BM25_B + BM25_B * nTok / avgdl));
  *pbFew = -score / tf > cut;
  return SQLITE_OK;
}

void hermes_cjk_few_snippet(const Fts5ExtensionApi *pApi, Fts5Context *pFts,
                            sqlite3_context *ctx, int nVal, sqlite3_value **apVal) {
  int *pbFew;
  int rc;

  if (nVal != 7) {
    sqlite3_result_error(ctx,
                         "wrong number of arguments to function cjk_few_snippet(): expected 8 "
                         "(table, score, n, column, open, close, ellipsis, max_chars)",
                         -1);
    return;
  }
  if (sqlite3_value_numeric_type(apVal[0]) != SQLITE_FLOAT &&
      sqlite3_value_numeric_type(apVal[0]) != SQLITE_INTEGER) {
    sqlite3_result_error(ctx, "cjk_few_snippet(): score must be a number", -1);
    return;
  }
  if (sqlite3_value_type(apVal[1]) != SQLITE_INTEGER) {
    sqlite3_result_error(ctx, "cjk_few_snippet(): n must be an integer", -1);
    return;
  }
  /* Checked on every row, so a bad argument is an error whether or not the
  ** phrase is rare (else it would be a silent NULL on common phrases). */
  if (!hermes_snippet_args_ok(pApi, pFts, ctx, &apVal[2], "cjk_few_snippet")) return;
  pbFew = (int *)pApi->xGetAuxdata(pFts, 0);
  if (pbFew == NULL) {
    int bFew = 0;
    rc = fewRows(pApi, pFts, sqlite3_value_double(apVal[0]), sqlite3_value_int64(apVal[1]),
                 &bFew);
    if (rc == SQLITE_OK) {
      pbFew = (int *)sqlite3_malloc64(sizeof(int));
      if (pbFew == NULL) rc = SQLITE_NOMEM;
    }
    if (rc == SQLITE_OK) {
      *pbFew = bFew;
      rc = pApi->xSetAuxdata(pFts, (void *)pbFew, sqlite3_free); /* frees it on failure */
    }
    if (rc != SQLITE_OK) {
      sqlite3_result_error_code(ctx, rc);
      return;
    }
  }
  if (!*pbFew) return; /* NULL: the caller builds this snippet afterwards */
  hermes_cjk_snippet(pApi, pFts, ctx, nVal - 2, &apVal[2]);
}
