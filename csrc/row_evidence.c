/*
** FTS5 auxiliary functions: what the current row holds of the query.
**
**   hermes_fts_held(tbl)
**     The phrases the row holds, as an integer: bit i is set when phrase i
**     occurs in the row.  A best match is the OR of its terms, one phrase
**     each, so one pass over the matches tells which terms each row holds.
**     More than HELD_MAX phrases cannot fit and are an error.
**
**   hermes_fts_bm25(tbl, avgdl, idf_0, ..., idf_n-1)
**     FTS5's bm25 score of the row, positive, with the statistics given:
**       sum over phrases i of idf_i * f_i * (k1 + 1) / (f_i + k1 * (1 - b + b * D / avgdl))
**     f_i the phrase's hits in the row (every column weighing 1), D the
**     row's tokens.  The same expression, in the same order, as FTS5's
**     bm25() with its defaults, so with FTS5's own IDFs and average the two
**     agree to the bit.  Why not bm25(): it counts each phrase's rows over
**     the whole index on every statement, and a search that reads the index
**     block by block (search/topk.py) knows those counts already.
**
**   hermes_fts_bm25(tbl, avgdl)
**     The row's saturation alone, f * (k1 + 1) / (f + k1 * (...)), for the
**     first phrase, at avgdl (0 or less: the index's own average): what
**     rank bounds store (index/rank_bounds.py).
**
**   hermes_fts_saturation(tbl, avgdl, sizes)
**     The same saturation (avgdl 0 or less: the index's average), with D read from `sizes`: a blob of little-endian
**     32-bit token counts indexed by rowid (0 or past its end: asked of the
**     index).  Building rank bounds reads every frequent token's rows, so a
**     row's size is looked up once for all of them instead of once each.
**
**   hermes_fts_block_peaks(block, saturation, nblocks, scale)   (aggregate)
**     One token's rank bounds from its rows: a blob of nblocks little-endian
**     16-bit row counts, then nblocks bytes of peaks, ceil(saturation *
**     scale), at most 255.  Rows come in any order; no SQL GROUP BY (a sort
**     of every row) is needed.
**
** Text, a blob or NULL where a number goes is an error, not a 0.
*/
#include <string.h>

#include "internal.h"
SQLITE_EXTENSION_INIT3

#define HELD_MAX 62
#define BM25_K1 1.2
#define BM25_B 0.75
/* Phrases hermes_fts_bm25() counts on the stack; more is an error. */
#define BM25_MAX_PHRASES 64

/* Whether v is a number (or text that reads as one), else an error on ctx
** naming it: text or a blob would be read as 0, a score that looks right. */
static int isNumber(sqlite3_context *ctx, sqlite3_value *v, int bInteger, const char *zWhat) {
  int t = sqlite3_value_numeric_type(v);
  char *zMsg;
  if (t == SQLITE_INTEGER || (t == SQLITE_FLOAT && !bInteger)) return 1;
  zMsg = sqlite3_mprintf("%s must be %s", zWhat, bInteger ? "an integer" : "a number");
  sqlite3_result_error(ctx, zMsg ? zMsg : "argument of the wrong type", -1);
  sqlite3_free(zMsg);
  return 0;
}

void hermes_fts_held(const Fts5ExtensionApi *pApi, Fts5Context *pFts, sqlite3_context *ctx,
                     int nVal, sqlite3_value **apVal) {
  sqlite3_int64 held = 0;
  int nPhrase = pApi->xPhraseCount(pFts);
  int i;
  (void)apVal;
  if (nVal != 0) {
    sqlite3_result_error(ctx, "hermes_fts_held: takes only the table", -1);
    return;
  }
  if (nPhrase > HELD_MAX) {
    sqlite3_result_error(ctx, "hermes_fts_held: more than 62 phrases", -1);
    return;
  }
  for (i = 0; i < nPhrase; i++) {
    Fts5PhraseIter iter;
    int iCol = -1;
    int iOff = -1;
    int rc = pApi->xPhraseFirst(pFts, i, &iter, &iCol, &iOff);
    if (rc != SQLITE_OK) {
      sqlite3_result_error_code(ctx, rc);
      return;
    }
    if (iCol >= 0) held |= (sqlite3_int64)1 << i;
  }
  sqlite3_result_int64(ctx, held);
}

/* The index's average tokens per row, as FTS5's bm25() computes it. */
static int indexAverage(const Fts5ExtensionApi *pApi, Fts5Context *pFts, double *pAvg) {
  sqlite3_int64 nRow = 0;
  sqlite3_int64 nToken = 0;
  int rc = pApi->xRowCount(pFts, &nRow);
  if (rc == SQLITE_OK) rc = pApi->xColumnTotalSize(pFts, -1, &nToken);
  if (rc == SQLITE_OK) *pAvg = nRow > 0 ? (double)nToken / (double)nRow : 1.0;
  if (*pAvg <= 0.0) *pAvg = 1.0;
  return rc;
}

void hermes_fts_bm25(const Fts5ExtensionApi *pApi, Fts5Context *pFts, sqlite3_context *ctx,
                     int nVal, sqlite3_value **apVal) {
  double aFreq[BM25_MAX_PHRASES];
  int nPhrase = pApi->xPhraseCount(pFts);
  int nInst = 0;
  int nTok = 0;
  int bSaturation;
  double avgdl;
  double D;
  double score = 0.0;
  int i;
  int rc;

  if (nVal < 1) {
    sqlite3_result_error(ctx, "hermes_fts_bm25: needs avgdl and one IDF per phrase", -1);
    return;
  }
  avgdl = sqlite3_value_double(apVal[0]);
  bSaturation = nVal == 1;
  if (nPhrase > BM25_MAX_PHRASES || (!bSaturation && nVal - 1 != nPhrase)) {
    sqlite3_result_error(ctx, "hermes_fts_bm25: one IDF per phrase, at most 64 phrases", -1);
    return;
  }
  for (i = 0; i < nVal; i++) {
    if (!isNumber(ctx, apVal[i], 0, i ? "hermes_fts_bm25: an IDF" : "hermes_fts_bm25: avgdl")) {
      return;
    }
  }
  for (i = 0; i < nPhrase; i++) aFreq[i] = 0.0;
  rc = pApi->xInstCount(pFts, &nInst);
  for (i = 0; rc == SQLITE_OK && i < nInst; i++) {
    int iPhrase = 0;
    int iCol = 0;
    int iOff = 0;
    rc = pApi->xInst(pFts, i, &iPhrase, &iCol, &iOff);
    if (rc == SQLITE_OK && iPhrase >= 0 && iPhrase < nPhrase) aFreq[iPhrase] += 1.0;
  }
  if (rc == SQLITE_OK) rc = pApi->xColumnSize(pFts, -1, &nTok);
  if (rc == SQLITE_OK && avgdl <= 0.0) rc = indexAverage(pApi, pFts, &avgdl);
  if (rc != SQLITE_OK) {
    sqlite3_result_error_code(ctx, rc);
    return;
  }
  D = (double)nTok;
  if (bSaturation) {
    double f = nPhrase > 0 ? aFreq[0] : 0.0;
    score = (f * (BM25_K1 + 1.0)) / (f + BM25_K1 * (1 - BM25_B + BM25_B * D / avgdl));
  } else {
    for (i = 0; i < nPhrase; i++) {
      double idf = sqlite3_value_double(apVal[i + 1]);
      score += idf * ((aFreq[i] * (BM25_K1 + 1.0)) /
                      (aFreq[i] + BM25_K1 * (1 - BM25_B + BM25_B * D / avgdl)));
    }
  }
  sqlite3_result_double(ctx, score);
}

/* Token count of `rowid` in a blob of little-endian uint32s, or 0 when absent. */
static sqlite3_int64 sizeOf(const unsigned char *aSize, int nSize, sqlite3_int64 rowid) {
  const unsigned char *p;
  if (aSize == NULL || rowid < 0 || rowid >= (sqlite3_int64)(nSize / 4)) return 0;
  p = aSize + rowid * 4;
  return (sqlite3_int64)p[0] | ((sqlite3_int64)p[1] << 8) | ((sqlite3_int64)p[2] << 16) |
         ((sqlite3_int64)p[3] << 24);
}

void hermes_fts_saturation(const Fts5ExtensionApi *pApi, Fts5Context *pFts, sqlite3_context *ctx,
                           int nVal, sqlite3_value **apVal) {
  Fts5PhraseIter iter;
  int iCol = -1;
  int iOff = -1;
  double f = 0.0;
  double avgdl;
  sqlite3_int64 nTok;
  int rc;

  if (nVal != 2) {
    sqlite3_result_error(ctx, "hermes_fts_saturation: needs avgdl and the sizes blob", -1);
    return;
  }
  if (!isNumber(ctx, apVal[0], 0, "hermes_fts_saturation: avgdl")) return;
  /* No MATCH (a scan, a rowid lookup): no phrase, nothing saturates, and
  ** xRowid must not be asked, as SQLite 3.40's reads a NULL expression there. */
  if (pApi->xPhraseCount(pFts) == 0) {
    sqlite3_result_double(ctx, 0.0);
    return;
  }
  avgdl = sqlite3_value_double(apVal[0]);
  rc = avgdl > 0.0 ? SQLITE_OK : indexAverage(pApi, pFts, &avgdl);
  if (rc == SQLITE_OK) rc = pApi->xPhraseFirst(pFts, 0, &iter, &iCol, &iOff);
  while (rc == SQLITE_OK && iCol >= 0) {
    f += 1.0;
    pApi->xPhraseNext(pFts, &iter, &iCol, &iOff);
  }
  nTok = sizeOf(sqlite3_value_blob(apVal[1]), sqlite3_value_bytes(apVal[1]), pApi->xRowid(pFts));
  if (rc == SQLITE_OK && nTok == 0) {
    int n = 0;
    rc = pApi->xColumnSize(pFts, -1, &n);
    nTok = n;
  }
  if (rc != SQLITE_OK) {
    sqlite3_result_error_code(ctx, rc);
    return;
  }
  sqlite3_result_double(ctx, (f * (BM25_K1 + 1.0)) /
                                 (f + BM25_K1 * (1 - BM25_B + BM25_B * (double)nTok / avgdl)));
}

/* The aggregate's state: counts and peaks per block, allocated on the first row. */
typedef struct BlockPeaks {
  sqlite3_int64 nBlock;
  unsigned char *aOut; /* 2 * nBlock bytes of counts, then nBlock of peaks */
} BlockPeaks;

void hermes_fts_block_peaks_step(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  BlockPeaks *p = (BlockPeaks *)sqlite3_aggregate_context(ctx, (int)sizeof(BlockPeaks));
  sqlite3_int64 iBlock = sqlite3_value_int64(argv[0]);
  double peak;
  unsigned char *pCount;
  unsigned int count;
  (void)argc;
  if (p == NULL) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if (!isNumber(ctx, argv[0], 1, "hermes_fts_block_peaks: block") ||
      !isNumber(ctx, argv[1], 0, "hermes_fts_block_peaks: saturation") ||
      !isNumber(ctx, argv[2], 1, "hermes_fts_block_peaks: nblocks") ||
      !isNumber(ctx, argv[3], 0, "hermes_fts_block_peaks: scale")) {
    return;
  }
  if (p->aOut == NULL) {
    p->nBlock = sqlite3_value_int64(argv[2]);
    if (p->nBlock <= 0 || p->nBlock > (sqlite3_int64)1 << 40) {
      sqlite3_result_error(ctx, "hermes_fts_block_peaks: nblocks out of range", -1);
      return;
    }
    p->aOut = (unsigned char *)sqlite3_malloc64((sqlite3_uint64)p->nBlock * 3);
    if (p->aOut == NULL) {
      sqlite3_result_error_nomem(ctx);
      return;
    }
    memset(p->aOut, 0, (size_t)p->nBlock * 3);
  }
  if (iBlock < 0 || iBlock >= p->nBlock) {
    sqlite3_result_error(ctx, "hermes_fts_block_peaks: block out of range", -1);
    return;
  }
  pCount = p->aOut + iBlock * 2;
  count = (unsigned int)pCount[0] | ((unsigned int)pCount[1] << 8);
  if (count < 0xFFFF) count++;
  pCount[0] = (unsigned char)(count & 0xFF);
  pCount[1] = (unsigned char)(count >> 8);
  /* ceil() without libm on [0, 255]; NaN (say infinity times a scale of 0) reads as 0,
     since casting it to int is undefined behaviour. */
  peak = sqlite3_value_double(argv[1]) * sqlite3_value_double(argv[3]) + 1e-9;
  if (peak > 255.0) peak = 255.0;
  if (!(peak >= 0.0)) peak = 0.0;
  if ((double)(int)peak < peak) peak = (double)((int)peak + 1);
  if (peak > (double)p->aOut[p->nBlock * 2 + iBlock]) {
    p->aOut[p->nBlock * 2 + iBlock] = (unsigned char)peak;
  }
}

void hermes_fts_block_peaks_final(sqlite3_context *ctx) {
  BlockPeaks *p = (BlockPeaks *)sqlite3_aggregate_context(ctx, 0);
  if (p == NULL || p->aOut == NULL) {
    sqlite3_result_null(ctx);
    return;
  }
  sqlite3_result_blob64(ctx, p->aOut, (sqlite3_uint64)p->nBlock * 3, sqlite3_free);
  p->aOut = NULL;
}
