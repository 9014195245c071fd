/*
** FTS5 auxiliary functions cjk_highlight() and cjk_snippet().
**
** The built-in highlight()/snippet() work per token, so the overlapping
** bigrams of one CJK phrase come out fragmented or doubled ("[中国][国人]").
** These functions work on byte ranges instead: every phrase hit in a column
** becomes the byte range from the start of its first token to the end of its
** last token (positions are mapped to byte ranges by re-tokenizing the
** column text), and overlapping or adjacent ranges are merged into one span
** with exact original offsets: 我是[中国人]民.
**
** Single-character hits (unigrams 1 tables) fall on a bigram position.  When
** the runtime offers Fts5ExtensionApi v3 (SQLite >= 3.45) xInstToken tells
** which character matched and the span is narrowed to it.  On older SQLite
** (e.g. 3.40) the whole bigram of that position is highlighted.
*/
#include "internal.h"
#include "variants.h"
SQLITE_EXTENSION_INIT3

#include <limits.h>
#include <stdlib.h> /* qsort */
#include <string.h>

/* A matched byte range [iStart, iEnd) of the column text. */
typedef struct Span {
  int iStart;
  int iEnd;
  int iPhrase;
} Span;

/* Token position -> byte range, built by re-tokenizing the column text. */
typedef struct PosMap {
  int *aStart;
  int *aEnd;
  int n;
  int nAlloc;
} PosMap;

typedef int (*InstTokenFn)(Fts5Context *, int iIdx, int iToken, const char **ppToken,
                           int *pnToken);

#if SQLITE_VERSION_NUMBER < 3045000
/* Headers older than 3.45 stop at xPhraseNextColumn; version 3 of the
** extension API appends these two methods (public ABI of fts5.h). */
typedef struct Fts5ExtensionApiV3 {
  Fts5ExtensionApi v2;
  int (*xQueryToken)(Fts5Context *, int iPhrase, int iToken, const char **ppToken, int *pnToken);
  InstTokenFn xInstToken;
} Fts5ExtensionApiV3;
#endif

/* xInstToken when the running SQLite really has it, else NULL.  Both the
** struct version and the library version are checked so an optimistic
** iVersion can never make us read past the end of the struct. */
static InstTokenFn getInstToken(const Fts5ExtensionApi *pApi) {
  if (pApi->iVersion < 3 || sqlite3_libversion_number() < 3045000) return NULL;
#if SQLITE_VERSION_NUMBER < 3045000
  return ((const Fts5ExtensionApiV3 *)pApi)->xInstToken;
#else
  return pApi->xInstToken;
#endif
}

static int posMapToken(void *pCtx, int tflags, const char *pToken, int nToken, int iStart,
                       int iEnd) {
  PosMap *m = (PosMap *)pCtx;
  (void)pToken;
  (void)nToken;
  /* Colocated tokens share the previous position; its range is the
  ** positional token's (the bigram). */
  if (tflags & FTS5_TOKEN_COLOCATED) return SQLITE_OK;
  if (m->n == m->nAlloc) {
    int nNew = m->nAlloc ? m->nAlloc * 2 : 64;
    int *aS;
    int *aE;
    if (m->nAlloc > INT_MAX / 4) return SQLITE_NOMEM;
    aS = (int *)sqlite3_realloc64(m->aStart, sizeof(int) * (sqlite3_uint64)nNew);
    if (aS == NULL) return SQLITE_NOMEM;
    m->aStart = aS;
    aE = (int *)sqlite3_realloc64(m->aEnd, sizeof(int) * (sqlite3_uint64)nNew);
    if (aE == NULL) return SQLITE_NOMEM;
    m->aEnd = aE;
    m->nAlloc = nNew;
  }
  m->aStart[m->n] = iStart;
  m->aEnd[m->n] = iEnd;
  m->n++;
  return SQLITE_OK;
}

static void posMapFree(PosMap *m) {
  sqlite3_free(m->aStart);
  sqlite3_free(m->aEnd);
  memset(m, 0, sizeof(*m));
}

static int cmpSpan(const void *a, const void *b) {
  const Span *x = (const Span *)a;
  const Span *y = (const Span *)b;
  if (x->iStart != y->iStart) return x->iStart < y->iStart ? -1 : 1;
  if (x->iEnd != y->iEnd) return x->iEnd < y->iEnd ? -1 : 1;
  return 0;
}

/* Narrow a one-token hit on a bigram to the character that matched.  The
** span stays as it is when the match cannot be pinned to one character;
** an error from xInstToken is passed up. */
static int refineSingleChar(InstTokenFn xInstToken, Fts5Context *pFts, int iInst, const char *z,
                             int n, Span *pSpan) {
  const char *pTok = NULL;
  int nTok = 0;
  unsigned int want;
  unsigned int cp[3];
  int aOff[4];
  int nChar = 0;
  int i;
  int iMatch = -1;

  int rc = xInstToken(pFts, iInst, 0, &pTok, &nTok);
  if (rc != SQLITE_OK) return rc;
  if (pTok == NULL || nTok <= 0) return SQLITE_OK;
  if (hermes_utf8_decode((const unsigned char *)pTok, nTok, &want) != nTok) return SQLITE_OK;
  if (!hermes_is_cjk(want)) return SQLITE_OK;
  /* Decode exactly as the tokenizer does (same folding, same bound).  Composed
  ** as "compose 1" does: a bigram of an index without it that holds a mark
  ** then reads as one character, and stays whole. */
  for (i = pSpan->iStart; i < pSpan->iEnd && nChar < 3;) {
    int bFolded;
    int len = hermes_fold_next((const unsigned char *)z + i, n - i, &cp[nChar], &bFolded,
                              HERMES_FOLD_ALL);
    /* "selectors 1": a CJK character's variation selectors are part of it. */
    if (hermes_is_cjk(cp[nChar])) {
      len += hermes_selectors_at((const unsigned char *)z + i + len, n - i - len);
    }
    aOff[nChar++] = i;
    i += len;
  }
  if (nChar != 2 || i != pSpan->iEnd) return SQLITE_OK;
  aOff[2] = i;
  for (i = 0; i < 2; i++) {
    /* Under "variants 1" / "kana 1" the token is the folded form (东 for 東,
    ** ら for ラ); folding the text's character too matches either way, and
    ** without the options a token only ever hit a bigram holding it. */
    if (cp[i] == want || hermes_variant_fold(hermes_kana_fold(cp[i])) == want) {
      iMatch = (iMatch < 0) ? i : 2; /* 2 = both match: ambiguous */
    }
  }
  if (iMatch == 0 || iMatch == 1) {
    pSpan->iStart = aOff[iMatch];
    pSpan->iEnd = aOff[iMatch + 1];
  }
  return SQLITE_OK;
}

/*
** Collect the hits of column iCol as byte ranges sorted by start.  *paHit is
** from sqlite3_malloc64 (NULL when there are none).
*/
static int collectHits(const Fts5ExtensionApi *pApi, Fts5Context *pFts, int iCol, const char *z,
                       int n, Span **paHit, int *pnHit) {
  PosMap m;
  Span *aHit = NULL;
  int nHit = 0;
  int nInst = 0;
  int rc;
  int i;
  InstTokenFn xInstToken = getInstToken(pApi);

  memset(&m, 0, sizeof(m));
  *paHit = NULL;
  *pnHit = 0;
  rc = pApi->xInstCount(pFts, &nInst);
  if (rc != SQLITE_OK || nInst <= 0) return rc;
  rc = pApi->xTokenize(pFts, z, n, (void *)&m, posMapToken);
  if (rc != SQLITE_OK) goto done;
  aHit = (Span *)sqlite3_malloc64(sizeof(Span) * (sqlite3_uint64)nInst);
  if (aHit == NULL) {
    rc = SQLITE_NOMEM;
    goto done;
  }
  for (i = 0; i < nInst; i++) {
    int iPhrase = 0;
    int iHitCol = 0;
    int iOff = 0;
    int nTok;
    rc = pApi->xInst(pFts, i, &iPhrase, &iHitCol, &iOff);
    if (rc != SQLITE_OK) goto done;
    if (iHitCol != iCol) continue;
    nTok = pApi->xPhraseSize(pFts, iPhrase);
    /* A stale external-content row can disagree with the index: skip hits
    ** that do not fit the text rather than reading past the map. */
    if (nTok < 1 || iOff < 0 || iOff > m.n - nTok) continue;
    aHit[nHit].iStart = m.aStart[iOff];
    aHit[nHit].iEnd = m.aEnd[iOff + nTok - 1];
    aHit[nHit].iPhrase = iPhrase;
    if (aHit[nHit].iEnd <= aHit[nHit].iStart) continue;
    if (nTok == 1 && xInstToken) {
      rc = refineSingleChar(xInstToken, pFts, i, z, n, &aHit[nHit]);
      if (rc != SQLITE_OK) goto done;
    }
    /* A token ends before a mark the tokenizer separates (東京 U+0301, a
    ** Devanagari vowel sign): the span keeps the character whole. */
    aHit[nHit].iEnd = hermes_char_end((const unsigned char *)z, n, aHit[nHit].iEnd);
    nHit++;
  }
  qsort(aHit, (size_t)nHit, sizeof(Span), cmpSpan);

done:
  posMapFree(&m);
  if (rc != SQLITE_OK || nHit == 0) {
    sqlite3_free(aHit);
    return rc;
  }
  *paHit = aHit;
  *pnHit = nHit;
  return SQLITE_OK;
}

/* Merge sorted spans in place: overlapping or touching ranges become one. */
static int mergeSpans(Span *a, int n) {
  int nOut = 0;
  int i;
  for (i = 0; i < n; i++) {
    if (nOut > 0 && a[i].iStart <= a[nOut - 1].iEnd) {
      if (a[i].iEnd > a[nOut - 1].iEnd) a[nOut - 1].iEnd = a[i].iEnd;
    } else {
      a[nOut++] = a[i];
    }
  }
  return nOut;
}

typedef struct Markers {
  const char *zOpen;
  int nOpen;
  const char *zClose;
  int nClose;
} Markers;

/* Append z[lo..hi) with every (merged) span marked, spans clipped to it. */
static void appendHighlighted(HBuf *b, const char *z, int lo, int hi, const Span *aSpan, int nSpan,
                              const Markers *mk) {
  int at = lo;
  int i;
  for (i = 0; i < nSpan; i++) {
    int s = aSpan[i].iStart < at ? at : aSpan[i].iStart;
    int e = aSpan[i].iEnd > hi ? hi : aSpan[i].iEnd;
    if (s >= e) continue;
    hermes_buf_append(b, z + at, (size_t)(s - at));
    hermes_buf_append(b, mk->zOpen, (size_t)mk->nOpen);
    hermes_buf_append(b, z + s, (size_t)(e - s));
    hermes_buf_append(b, mk->zClose, (size_t)mk->nClose);
    at = e;
  }
  if (at < hi) hermes_buf_append(b, z + at, (size_t)(hi - at));
}

static void readMarker(sqlite3_value *pVal, const char **pz, int *pn) {
  const char *z = (const char *)sqlite3_value_text(pVal);
  *pz = z ? z : "";
  *pn = z ? sqlite3_value_bytes(pVal) : 0;
}

static void resultErrorf(sqlite3_context *ctx, const char *zFmt, int iArg) {
  char *zMsg = sqlite3_mprintf(zFmt, iArg);
  sqlite3_result_error(ctx, zMsg ? zMsg : zFmt, -1);
  sqlite3_free(zMsg);
}

/* cjk_highlight(tbl, col, open, close) */
void hermes_cjk_highlight(const Fts5ExtensionApi *pApi, Fts5Context *pFts, sqlite3_context *ctx,
                         int nVal, sqlite3_value **apVal) {
  Markers mk;
  const char *z = NULL;
  int n = 0;
  int iCol;
  Span *aHit = NULL;
  int nHit = 0;
  HBuf b;
  int rc;

  if (nVal != 3) {
    resultErrorf(ctx,
                 "wrong number of arguments to function cjk_highlight(): expected 4 "
                 "(table, column, open, close), got %d",
                 nVal + 1);
    return;
  }
  /* Read wide: as an int, 4294967296 would wrap to column 0. */
  if (sqlite3_value_int64(apVal[0]) < 0 ||
      sqlite3_value_int64(apVal[0]) >= pApi->xColumnCount(pFts)) {
    char *zMsg = sqlite3_mprintf("cjk_highlight(): column index %lld out of range",
                                 sqlite3_value_int64(apVal[0]));
    sqlite3_result_error(ctx, zMsg ? zMsg : "cjk_highlight(): column index out of range", -1);
    sqlite3_free(zMsg);
    return;
  }
  iCol = sqlite3_value_int(apVal[0]);
  readMarker(apVal[1], &mk.zOpen, &mk.nOpen);
  readMarker(apVal[2], &mk.zClose, &mk.nClose);
  rc = pApi->xColumnText(pFts, iCol, &z, &n);
  if (rc != SQLITE_OK) {
    sqlite3_result_error_code(ctx, rc);
    return;
  }
  if (z == NULL) return; /* NULL column -> NULL, as the built-in highlight() */

  rc = collectHits(pApi, pFts, iCol, z, n, &aHit, &nHit);
  if (rc != SQLITE_OK) {
    sqlite3_result_error_code(ctx, rc);
    return;
  }
  nHit = mergeSpans(aHit, nHit);
  memset(&b, 0, sizeof(b));
  appendHighlighted(&b, z, 0, n, aHit, nHit, &mk);
  hermes_buf_result_text(&b, ctx);
  sqlite3_free(aHit);
}

/* Column with the most hits (ties: lowest index); with no hits at all, the
** first column that has text. */
static int bestColumn(const Fts5ExtensionApi *pApi, Fts5Context *pFts, int *piCol) {
  int nCol = pApi->xColumnCount(pFts);
  int nInst = 0;
  int *aCount;
  int rc;
  int i;
  int iBest = -1;

  aCount = (int *)sqlite3_malloc64(sizeof(int) * (sqlite3_uint64)(nCol > 0 ? nCol : 1));
  if (aCount == NULL) return SQLITE_NOMEM;
  memset(aCount, 0, sizeof(int) * (size_t)(nCol > 0 ? nCol : 1));
  rc = pApi->xInstCount(pFts, &nInst);
  for (i = 0; rc == SQLITE_OK && i < nInst; i++) {
    int iPhrase, iCol, iOff;
    rc = pApi->xInst(pFts, i, &iPhrase, &iCol, &iOff);
    if (rc == SQLITE_OK && iCol >= 0 && iCol < nCol) aCount[iCol]++;
  }
  for (i = 0; rc == SQLITE_OK && i < nCol; i++) {
    if (aCount[i] > 0 && (iBest < 0 || aCount[i] > aCount[iBest])) iBest = i;
  }
  for (i = 0; rc == SQLITE_OK && iBest < 0 && i < nCol; i++) {
    const char *z = NULL;
    int n = 0;
    rc = pApi->xColumnText(pFts, i, &z, &n);
    if (rc == SQLITE_OK && z != NULL && n > 0) iBest = i;
  }
  sqlite3_free(aCount);
  *piCol = iBest < 0 ? 0 : iBest;
  return rc;
}

/* Index of the code point that starts at byte iByte (first at or after). */
static int charIndexOf(const int *aChar, int nChar, int iByte) {
  int lo = 0;
  int hi = nChar;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (aChar[mid] < iByte) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/* A candidate window: the one centred on hit iHit, from character iWs. */
typedef struct Window {
  int iWs;
  int iHit;
} Window;

static int cmpWindow(const void *a, const void *b) {
  const Window *x = (const Window *)a;
  const Window *y = (const Window *)b;
  if (x->iWs != y->iWs) return x->iWs < y->iWs ? -1 : 1;
  return x->iHit < y->iHit ? -1 : (x->iHit > y->iHit);
}

/* Hits by end, for the sweep below. */
static int cmpByEnd(const void *a, const void *b) {
  const Span *x = (const Span *)a;
  const Span *y = (const Span *)b;
  if (x->iEnd != y->iEnd) return x->iEnd < y->iEnd ? -1 : 1;
  return 0;
}

/*
** The snippet window (its first character) of nMax characters: of the windows
** centred on each hit (sorted by start), the one with the most distinct
** phrases fully inside, then the most hits; ties keep the earliest hit.  The
** windows are swept in order of start, each hit entering once and leaving once,
** so a long max_chars over a text full of hits stays O(n log n), not O(n^2).
*/
static int bestWindow(const Span *aHit, int nHit, const int *aChar, int nChar, int nMax,
                      int nPhrase, int *piWinStart) {
  sqlite3_uint64 nByte = (sizeof(Window) + sizeof(Span) + 4 * sizeof(int)) * (sqlite3_uint64)nHit +
                         sizeof(int) * (sqlite3_uint64)(nPhrase > 0 ? nPhrase : 1);
  Window *aWin;
  Span *aEnd;    /* the hits by end; iPhrase holds the hit's index in aHit */
  int *aScore;   /* per hit's window: distinct phrases, hits, its start (3 each) */
  int *aIn;      /* per hit: inside the current window */
  int *aPhrase;  /* per phrase: its hits inside the current window */
  int nDistinct = 0;
  int nCount = 0;
  int iEnter = 0;
  int iLeave = 0;
  int iBest = 0;
  int i;

  aWin = (Window *)sqlite3_malloc64(nByte);
  if (aWin == NULL) return SQLITE_NOMEM;
  memset(aWin, 0, (size_t)nByte);
  aEnd = (Span *)&aWin[nHit];
  aScore = (int *)&aEnd[nHit];
  aIn = &aScore[3 * nHit];
  aPhrase = &aIn[nHit];
  for (i = 0; i < nHit; i++) {
    int hs = charIndexOf(aChar, nChar, aHit[i].iStart);
    int he = charIndexOf(aChar, nChar, aHit[i].iEnd);
    int ws = (hs + he) / 2 - nMax / 2;
    if (ws > nChar - nMax) ws = nChar - nMax;
    if (ws < 0) ws = 0;
    aWin[i].iWs = ws;
    aWin[i].iHit = i;
    aEnd[i] = aHit[i];
    aEnd[i].iPhrase = i;
  }
  qsort(aWin, (size_t)nHit, sizeof(Window), cmpWindow);
  qsort(aEnd, (size_t)nHit, sizeof(Span), cmpByEnd);
  for (i = 0; i < nHit; i++) {
    int lo = aChar[aWin[i].iWs];
    int hi = aChar[aWin[i].iWs + nMax];
    /* Windows only move right: a hit starting before this one has left for good. */
    for (; iLeave < nHit && aHit[iLeave].iStart < lo; iLeave++) {
      int ph = aHit[iLeave].iPhrase;
      if (!aIn[iLeave]) continue;
      aIn[iLeave] = 0;
      nCount--;
      if (ph >= 0 && ph < nPhrase && --aPhrase[ph] == 0) nDistinct--;
    }
    for (; iEnter < nHit && aEnd[iEnter].iEnd <= hi; iEnter++) {
      int j = aEnd[iEnter].iPhrase;
      int ph = aHit[j].iPhrase;
      if (aHit[j].iStart < lo) continue;
      aIn[j] = 1;
      nCount++;
      if (ph >= 0 && ph < nPhrase && aPhrase[ph]++ == 0) nDistinct++;
    }
    aScore[3 * aWin[i].iHit] = nDistinct;
    aScore[3 * aWin[i].iHit + 1] = nCount;
    aScore[3 * aWin[i].iHit + 2] = aWin[i].iWs;
  }
  for (i = 1; i < nHit; i++) {
    if (aScore[3 * i] > aScore[3 * iBest] ||
        (aScore[3 * i] == aScore[3 * iBest] && aScore[3 * i + 1] > aScore[3 * iBest + 1])) {
      iBest = i;
    }
  }
  *piWinStart = aScore[3 * iBest + 2];
  sqlite3_free(aWin);
  return SQLITE_OK;
}

/* max_chars as an int: a larger number asks for the whole text, which has
** fewer characters than that anyway (read as int it would wrap negative). */
static int snippetMaxChars(sqlite3_value *pVal) {
  sqlite3_int64 n = sqlite3_value_int64(pVal);
  return n > INT_MAX ? INT_MAX : (int)n;
}

int hermes_snippet_args_ok(const Fts5ExtensionApi *pApi, Fts5Context *pFts, sqlite3_context *ctx,
                           sqlite3_value **apVal, const char *zFunc) {
  sqlite3_int64 iCol = sqlite3_value_int64(apVal[0]);
  sqlite3_int64 nMax = sqlite3_value_int64(apVal[4]);
  char *zMsg = NULL;
  if (nMax < 1) {
    zMsg = sqlite3_mprintf("%s(): max_chars must be at least 1, got %lld", zFunc, nMax);
  } else if (iCol >= pApi->xColumnCount(pFts) || iCol < -1) {
    zMsg = sqlite3_mprintf("%s(): column index %lld out of range", zFunc, iCol);
  } else {
    return 1;
  }
  sqlite3_result_error(ctx, zMsg ? zMsg : "snippet argument out of range", -1);
  sqlite3_free(zMsg);
  return 0;
}

/* cjk_snippet(tbl, col, open, close, ellipsis, max_chars) */
void hermes_cjk_snippet(const Fts5ExtensionApi *pApi, Fts5Context *pFts, sqlite3_context *ctx,
                       int nVal, sqlite3_value **apVal) {
  Markers mk;
  const char *zEllipsis;
  int nEllipsis;
  const char *z = NULL;
  int n = 0;
  int iCol;
  int nMax;
  Span *aHit = NULL;
  int nHit = 0;
  int *aChar = NULL; /* byte offset of every code point, plus n at the end */
  int nChar = 0;
  int iWinStart = 0;
  int iWinEnd;
  HBuf b;
  int rc;
  int i;

  memset(&b, 0, sizeof(b));
  if (nVal != 5) {
    resultErrorf(ctx,
                 "wrong number of arguments to function cjk_snippet(): expected 6 "
                 "(table, column, open, close, ellipsis, max_chars), got %d",
                 nVal + 1);
    return;
  }
  if (!hermes_snippet_args_ok(pApi, pFts, ctx, apVal, "cjk_snippet")) return;
  iCol = sqlite3_value_int(apVal[0]);
  nMax = snippetMaxChars(apVal[4]);
  readMarker(apVal[1], &mk.zOpen, &mk.nOpen);
  readMarker(apVal[2], &mk.zClose, &mk.nClose);
  readMarker(apVal[3], &zEllipsis, &nEllipsis);

  rc = (iCol < 0) ? bestColumn(pApi, pFts, &iCol) : SQLITE_OK;
  if (rc == SQLITE_OK) rc = pApi->xColumnText(pFts, iCol, &z, &n);
  if (rc != SQLITE_OK) goto error;
  if (z == NULL) return; /* NULL column -> NULL */

  rc = collectHits(pApi, pFts, iCol, z, n, &aHit, &nHit);
  if (rc != SQLITE_OK) goto error;

  /* Code point boundaries (the same lenient decoding as the tokenizer, so
  ** every token offset is one of them). */
  aChar = (int *)sqlite3_malloc64(sizeof(int) * ((sqlite3_uint64)n + 1));
  if (aChar == NULL) {
    rc = SQLITE_NOMEM;
    goto error;
  }
  for (i = 0; i < n;) {
    unsigned int cp;
    aChar[nChar++] = i;
    i += hermes_utf8_decode((const unsigned char *)z + i, n - i, &cp);
  }
  aChar[nChar] = n;

  if (nChar > nMax && nHit > 0) {
    rc = bestWindow(aHit, nHit, aChar, nChar, nMax, pApi->xPhraseCount(pFts), &iWinStart);
    if (rc != SQLITE_OK) goto error;
  }
  iWinEnd = iWinStart + nMax;
  if (iWinEnd > nChar) iWinEnd = nChar;
  /* Whole characters at both edges: half an emoji family, or a flag's second
  ** half beside the next flag's first, shows other characters. */
  while (iWinStart > 0 && hermes_inside_char((const unsigned char *)z, n, aChar, iWinStart)) {
    iWinStart--;
  }
  while (iWinEnd < nChar && hermes_inside_char((const unsigned char *)z, n, aChar, iWinEnd)) {
    iWinEnd++;
  }

  nHit = mergeSpans(aHit, nHit);
  if (iWinStart > 0) hermes_buf_append(&b, zEllipsis, (size_t)nEllipsis);
  appendHighlighted(&b, z, aChar[iWinStart], aChar[iWinEnd], aHit, nHit, &mk);
  if (iWinEnd < nChar) hermes_buf_append(&b, zEllipsis, (size_t)nEllipsis);
  hermes_buf_result_text(&b, ctx);
  goto cleanup;

error:
  sqlite3_result_error_code(ctx, rc);
cleanup:
  hermes_buf_free(&b);
  sqlite3_free(aHit);
  sqlite3_free(aChar);
}
